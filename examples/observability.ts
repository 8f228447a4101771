// Observability: OpenTelemetry spans exported over OTLP/HTTP (or printed), a budget, a price table,
// live program output and the run's usage. A scripted model stands in for a real one (no key
// needed); with a real model, pass "openai:gpt-5-mini" and its price.
// Run: node examples/observability.ts
//      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://localhost:4318/v1/traces node examples/observability.ts
import { BudgetExceededError, buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from "@opentelemetry/sdk-trace-base";

// 1. Register an SDK once, at start-up. Without one, codeaction creates no span at all.
const endpoint = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
const exporter = endpoint ? new OTLPTraceExporter({ url: endpoint }) : new ConsoleSpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

const program = [
  "```python",
  "import time",
  'print("counting the rows...")',
  "time.sleep(1)",
  'print("RESULT: 500")',
  "```",
].join("\n");
const model = new ScriptedChatModel([{ content: program, usage: { inputTokens: 1800, outputTokens: 60 } }]);

// 2. A budget for every run, and the prices that make result.usage.costUsd.
const agent = await buildAgent({
  model,
  pattern: "code-action",
  budget: { maxModelCalls: 4, maxCostUsd: 0.05, maxWallSeconds: 120 },
  pricing: { scripted: { inputPerMTok: 0.25, outputPerMTok: 2 } },
});

try {
  // 3. Live output: program-output events arrive while the program runs.
  for await (const event of await agent.stream("How many orders are there?")) {
    if (event.type === "program-output") console.log(`[program ${event.stream}] ${event.line}`);
    if (event.type === "answer") {
      const { usage } = event.result;
      console.log(`>>> ${event.result.answer}`);
      console.log(
        `usage: ${usage.inputTokens} in, ${usage.outputTokens} out, ${usage.modelCalls} model call(s), ` +
          `${usage.attempts} attempt(s), ${usage.sandboxSeconds.toFixed(1)} s in the sandbox, $${usage.costUsd?.toFixed(6)}`,
      );
    }
  }
} catch (error) {
  if (!BudgetExceededError.isInstance(error)) throw error;
  console.error(`stopped at ${error.limit} after ${error.usage.modelCalls} model call(s)`);
} finally {
  await agent.close();
  await provider.shutdown(); // flushes the last spans
}
