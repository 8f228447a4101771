// What tracing costs a bridged tool call: the same no-op tool called from a program in a real
// container, with no OpenTelemetry SDK registered and with the official SDK (in-memory exporter)
// registered, rounds interleaved; plus the wrapper's own cost in this process with no SDK.
// Run: node bench/tracing-overhead.ts [rounds] [calls per round]
import { fromLangChainTool } from "@codeaction/core";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createRunObserver } from "../packages/core/src/tracing/run-observer.ts";
import { trackToolCalls } from "../packages/core/src/tracing/tool-runs.ts";
import { scriptedAgent } from "./agents.ts";
import { summarize } from "./stats.ts";
import { callLoopProgram, noopTool } from "./tool-call-cost.ts";

const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 200);

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const contextManager = new AsyncLocalStorageContextManager().enable();

type Mode = "none" | "contextOnly" | "sdk";

/** none: nothing registered; contextOnly: the async-hooks context manager alone; sdk: it and the provider. */
function registerSdk(mode: Mode | boolean): void {
  trace.disable();
  context.disable();
  if (mode === false || mode === "none") return;
  context.setGlobalContextManager(contextManager);
  if (mode === "contextOnly") return;
  trace.setGlobalTracerProvider(provider);
}

/**
 * The tool wrapper in this process, per call: the bare ToolSpec, the tracked one with no SDK, and
 * the tracked one with the SDK registered (an execute_tool span per call).
 */
async function wrapperCost(): Promise<{ bare: number[]; none: number[]; sdk: number[] }> {
  const spec = fromLangChainTool(noopTool);
  const samples = { bare: [] as number[], none: [] as number[], sdk: [] as number[] };
  for (const mode of ["none", "sdk"] as const) {
    registerSdk(mode === "sdk");
    const observer = await createRunObserver({ runId: "bench", pattern: "code-action" });
    const [tracked] = trackToolCalls([spec], undefined, { spans: observer.spans, observer }).tools;
    for (let index = 0; index < 20_000; index += 1) {
      if (index % 1000 === 0) exporter.reset();
      let started = performance.now();
      await spec.invoke({}, { runId: "bench", callId: `c${index}` });
      samples.bare.push(performance.now() - started);
      started = performance.now();
      await tracked?.invoke({}, { runId: "bench", callId: `c${index}` });
      samples[mode].push(performance.now() - started);
    }
  }
  return samples;
}

const agent = await scriptedAgent({
  program: callLoopProgram(calls),
  replies: rounds * 3,
  sandbox: {},
  extra: { extraTools: [noopTool], codeAction: { maxToolCalls: calls + 10 } },
});
const bridged = { none: [] as number[], contextOnly: [] as number[], sdk: [] as number[] };
const orders: Mode[][] = [
  ["none", "contextOnly", "sdk"],
  ["sdk", "none", "contextOnly"],
  ["contextOnly", "sdk", "none"],
];
let spansPerRun = 0;
try {
  for (let round = 0; round < rounds; round += 1) {
    for (const mode of orders[round % 3] ?? []) {
      registerSdk(mode);
      exporter.reset();
      const result = await agent.invoke({ messages: [{ role: "user", content: "Call noop." }] });
      if (result.status !== "answered") throw new Error(`the run failed: ${result.status}`);
      bridged[mode].push(...(JSON.parse(result.answer) as number[]));
      if (mode === "sdk") spansPerRun = exporter.getFinishedSpans().length;
    }
    process.stderr.write(`round ${round + 1}/${rounds}\n`);
  }
} finally {
  await agent.close();
}
const wrapper = await wrapperCost();

const none = summarize(bridged.none);
const sdk = summarize(bridged.sdk);
const contextOnly = summarize(bridged.contextOnly);
const bare = summarize(wrapper.bare);
const trackedNone = summarize(wrapper.none);
const trackedSdk = summarize(wrapper.sdk);
const format = (value: number) => value.toFixed(3);
const percent = (value: number) => `${((value / none.p50) * 100).toFixed(2)}% of a bridged call`;
console.log(
  `bridged no-op call, ms (median, p95), ${rounds} rounds x ${calls} calls, measured in the program:`,
);
console.log(`  no SDK registered:        ${format(none.p50)}  ${format(none.p95)}`);
console.log(
  `  SDK registered (memory):  ${format(sdk.p50)}  ${format(sdk.p95)}   (${spansPerRun} spans per run)`,
);
console.log(`  context manager alone:    ${format(contextOnly.p50)}  ${format(contextOnly.p95)}`);
console.log(`  difference of medians:    ${format(sdk.p50 - none.p50)} ms`);
console.log("the tool wrapper in this process, ms per call (median of 20,000):");
console.log(`  bare ToolSpec.invoke:          ${format(bare.p50)}`);
console.log(
  `  tracked, no SDK:               ${format(trackedNone.p50)}  (+${format(trackedNone.p50 - bare.p50)} ms = ${percent(trackedNone.p50 - bare.p50)})`,
);
console.log(
  `  tracked, SDK registered:       ${format(trackedSdk.p50)}  (+${format(trackedSdk.p50 - bare.p50)} ms = ${percent(trackedSdk.p50 - bare.p50)})`,
);
