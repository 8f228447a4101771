// Durable runs (docs/durable-runs.md), measured:
//   1. the call log's cost per bridged call: the same program (N no-op calls) through runProgram with
//      the bridge's tools as they are and through a CallGate (every call logged), rounds interleaved,
//      each in a fresh container; and the gate's host-side work alone, in this process.
//   2. a resume's wall time against a fresh turn of the same program (scripted model: no model time).
// Usage: node bench/durable.ts [rounds] [calls]
import { randomBytes } from "node:crypto";
import { buildAgent, createCodeActionSandbox, fromLangChainTool, type RunState } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { CallGate } from "../packages/core/src/bridge/call-gate.ts";
import { runProgram } from "../packages/core/src/program/run-program.ts";
import { renderStubsModule } from "../packages/core/src/prompt/python-stubs.ts";
import { fenced } from "./agents.ts";
import { percentile } from "./stats.ts";
import { callLoopProgram, noopTool } from "./tool-call-cost.ts";

const median = (values: readonly number[]) => percentile(values, 0.5);
const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 500);
const noop = fromLangChainTool(noopTool);

async function callCost(): Promise<{ plain: number; logged: number }> {
  const sandbox = createCodeActionSandbox({ network: "none" });
  await sandbox.ready();
  const perCall = { plain: [] as number[], logged: [] as number[] };
  try {
    for (let round = 0; round <= rounds; round += 1) {
      for (const variant of ["plain", "logged"] as const) {
        const gate = new CallGate({
          runId: "bench",
          tools: [noop],
          maxResultBytes: 16 << 20,
          stop: () => undefined,
        });
        const session = await sandbox.createSession();
        try {
          const run = await runProgram({
            session,
            program: callLoopProgram(calls),
            stubsSource: renderStubsModule([noop]),
            tools: variant === "logged" ? gate.tools : [noop],
            ...(variant === "logged" ? { approval: gate.approval } : {}),
            runId: "bench",
            execTimeout: 300,
            maxToolCalls: calls + 10,
          });
          if (run.status !== "ok") throw new Error(`the call loop failed: ${run.status} ${run.stderr}`);
          if (variant === "logged" && gate.log.entries().length !== calls)
            throw new Error("calls were not logged");
          // Round 0 warms up.
          if (round > 0) perCall[variant].push(median(JSON.parse(run.result ?? "[]") as number[]));
        } finally {
          await session.close();
        }
      }
    }
  } finally {
    await sandbox.close();
  }
  return { plain: median(perCall.plain), logged: median(perCall.logged) };
}

/** The gate's own work per call (sequence, canonical arguments and digest, encoding, the log entry), no bridge. */
async function gateOnly(): Promise<number> {
  const gate = new CallGate({
    runId: "bench",
    tools: [noop],
    maxResultBytes: 16 << 20,
    stop: () => undefined,
  });
  const count = 20_000;
  const started = performance.now();
  for (let index = 0; index < count; index += 1) {
    const signal = new AbortController().signal;
    await gate.approval({ tool: "noop", args: { index }, runId: "bench", signal });
    await gate.tools[0]!.invoke({}, { runId: "bench", signal });
  }
  const withGate = (performance.now() - started) / count;
  const floor = performance.now();
  for (let index = 0; index < count; index += 1) {
    await noop.invoke({}, { runId: "bench", signal: new AbortController().signal });
  }
  return withGate - (performance.now() - floor) / count;
}

async function resumeVersusFresh(): Promise<{ fresh: number; resume: number }> {
  const lookup = tool(async () => ({ balance: 42 }), {
    name: "lookup",
    description: "Balance.",
    schema: z.object({}),
  });
  const charge = tool(async ({ amount }) => `charged ${amount}`, {
    name: "charge_card",
    description: "Charges.",
    schema: z.object({ amount: z.number() }),
  });
  const program = 'print("RESULT:", charge_card(amount=lookup()["balance"]))';
  const resumeSecret = randomBytes(32).toString("hex");
  const build = (approval: "interrupt" | true) =>
    buildAgent({
      model: new ScriptedChatModel(Array.from({ length: rounds + 1 }, () => fenced(program))),
      pattern: "code-action",
      extraTools: [lookup, charge],
      approval: (call) => (call.tool === "charge_card" ? approval : true),
      resumeSecret,
    });
  const interrupting = await build("interrupt");
  const approving = await build(true);
  const times = { fresh: [] as number[], resume: [] as number[] };
  try {
    const first = await interrupting.invoke("Charge the balance.");
    if (first.status !== "interrupted") throw new Error("the run was not interrupted");
    const state: RunState = first.interrupt.state;
    for (let round = 0; round <= rounds; round += 1) {
      let started = performance.now();
      const fresh = await approving.invoke("Charge the balance.");
      const freshMs = performance.now() - started;
      started = performance.now();
      const resumed = await interrupting.resume(state, true);
      const resumeMs = performance.now() - started;
      if (fresh.answer !== "charged 42" || resumed.answer !== "charged 42")
        throw new Error("a run did not answer");
      if (round > 0) {
        times.fresh.push(freshMs);
        times.resume.push(resumeMs);
      }
    }
  } finally {
    await Promise.all([interrupting.close(), approving.close()]);
  }
  return { fresh: median(times.fresh), resume: median(times.resume) };
}

const cost = await callCost();
const gate = await gateOnly();
console.log(
  `call log, per bridged call (median of ${rounds} rounds of ${calls} calls): ${cost.plain.toFixed(3)} ms without, ${cost.logged.toFixed(3)} ms with (${(cost.logged - cost.plain).toFixed(3)} ms, ${(((cost.logged - cost.plain) / cost.plain) * 100).toFixed(1)}%); the gate's own host work: ${(gate * 1000).toFixed(1)} µs per call`,
);
const turns = await resumeVersusFresh();
console.log(
  `resume vs fresh turn (scripted model, warm pool, median of ${rounds}): fresh ${turns.fresh.toFixed(0)} ms, resume ${turns.resume.toFixed(0)} ms`,
);
