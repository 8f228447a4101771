import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { echoTool, runLocally } from "../../test/local-relay.ts";
import type { CallLogEntry } from "../durable/call-log.ts";
import { seededStubs } from "../durable/determinism.ts";
import { ReplayDivergenceError } from "../errors/replay-divergence-error.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { ApprovalHook } from "../types.ts";
import { CallGate, type CallGateOptions, type GateStop } from "./call-gate.ts";

/** A tool that counts its calls and answers `answer(args)`. */
function countedTool(name: string, answer: (args: Record<string, unknown>) => unknown) {
  const calls: Array<Record<string, unknown>> = [];
  const tool: ToolSpec = {
    name,
    description: `The ${name} tool.`,
    origin: "tool",
    inputSchema: { type: "object", properties: { value: {} } },
    invoke: async (args) => {
      calls.push(args);
      return answer(args);
    },
  };
  return { tool, calls };
}

/** Runs `program` through a local relay with a gate; a stop kills the program as the turn does. */
async function runGated(
  program: string,
  options: Omit<CallGateOptions, "runId" | "stop" | "maxResultBytes"> & { maxResultBytes?: number },
) {
  const controller = new AbortController();
  const stops: GateStop[] = [];
  const gate = new CallGate({
    runId: "run-gate",
    maxResultBytes: 16 * 1024 * 1024,
    ...options,
    stop: (stop) => {
      stops.push(stop);
      controller.abort(stop);
    },
  });
  const run = await runLocally({
    program,
    tools: gate.tools,
    approval: gate.approval,
    stubsSource: seededStubs(renderStubsModule([...options.tools]), "run-gate"),
    signal: controller.signal,
  });
  return { run, stops, log: gate.log.entries() };
}

const lookupThenCharge = `
customer = lookup(value={"name": "Ada", "id": 7})
try:
    receipt = charge_card(value=customer["echoed"]["id"])
    print("RESULT:", receipt["echoed"])
except ToolDenied as denied:
    print("RESULT: denied:", denied)
`;

const interruptCharges: ApprovalHook = (call) => (call.tool === "charge_card" ? "interrupt" : true);

describe("the call log", () => {
  it("logs each call in order with its canonical arguments and the exact result the program got", async () => {
    const lookup = echoTool("lookup");
    const charge = echoTool("charge_card");
    const { run, log } = await runGated(lookupThenCharge, { tools: [lookup.tool, charge.tool] });
    expect(run.result).toBe("7");
    expect(log.map((entry) => [entry.sequence, entry.tool, entry.status])).toEqual([
      [1, "lookup", "ok"],
      [2, "charge_card", "ok"],
    ]);
    expect(log[0]).toMatchObject({
      args: { value: { id: 7, name: "Ada" } },
      result: '{"echoed":{"name":"Ada","id":7}}',
    });
    // Canonical: keys sorted, so the digest does not depend on the order the program wrote them in.
    expect(log[0]?.argsDigest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("keeps a result over the limit as its size and SHA-256 digest, not a copy", async () => {
    const big = countedTool("big", () => "x".repeat(3000));
    const { log } = await runGated('big(value=1)\nprint("RESULT: ok")', {
      tools: [big.tool],
      limits: { maxResultCharacters: 1000 },
    });
    expect(log[0]?.result).toBeUndefined();
    expect(log[0]?.resultRef).toEqual({
      sha256: createHash("sha256")
        .update(JSON.stringify("x".repeat(3000)))
        .digest("hex"),
      bytes: 3002,
    });
  });
  it("a hook that throws denies the call, in the same words as the bridge and the tools pattern, and logs it denied", async () => {
    const lookup = echoTool("lookup");
    const charge = echoTool("charge_card");
    const failing: ApprovalHook = (call) => {
      if (call.tool === "charge_card") throw new Error("approval service down");
      return true;
    };
    const { run, log } = await runGated(lookupThenCharge, {
      tools: [lookup.tool, charge.tool],
      approval: failing,
    });
    expect(run.result).toBe(
      "denied: the approval hook failed, so the call to charge_card was not made: approval service down",
    );
    expect(log.map((entry) => [entry.tool, entry.status, entry.error])).toEqual([
      ["lookup", "ok", undefined],
      [
        "charge_card",
        "denied",
        "the approval hook failed, so the call to charge_card was not made: approval service down",
      ],
    ]);
  });
});

describe("interrupt, resume and divergence", () => {
  it("an interrupt stops the program before the call is made, naming the pending call", async () => {
    const lookup = echoTool("lookup");
    const charge = echoTool("charge_card");
    const { run, stops, log } = await runGated(lookupThenCharge, {
      tools: [lookup.tool, charge.tool],
      approval: interruptCharges,
    });
    expect(charge.calls).toHaveLength(0);
    expect(run.status).toBe("aborted");
    expect(stops).toEqual([
      { kind: "interrupt", pending: { sequence: 2, tool: "charge_card", args: { value: 7 } } },
    ]);
    expect(log.map((entry) => entry.tool)).toEqual(["lookup"]);
  });

  it("a resumed program is answered from the log, and the pending call gets the decision", async () => {
    const first = await runGated(lookupThenCharge, {
      tools: [echoTool("lookup").tool, echoTool("charge_card").tool],
      approval: interruptCharges,
    });
    const stop = first.stops[0] as Extract<GateStop, { kind: "interrupt" }>;
    for (const [decision, expected, charged] of [
      [true, "7", 1],
      [{ approved: false, reason: "over budget" }, "denied: over budget", 0],
    ] as const) {
      const lookup = echoTool("lookup");
      const charge = echoTool("charge_card");
      const hookCalls: string[] = [];
      const resumed = await runGated(lookupThenCharge, {
        tools: [lookup.tool, charge.tool],
        approval: (call) => {
          hookCalls.push(`${call.tool} ${call.resumeDecision ?? "asked"}`);
          return true;
        },
        logged: first.log,
        pending: { call: stop.pending, decision },
      });
      expect(resumed.run.result).toBe(expected);
      expect(lookup.calls).toHaveLength(0);
      expect(charge.calls).toHaveLength(charged);
      // The logged call never reaches the hook; an approved pending call does, marked as decided.
      expect(hookCalls).toEqual(charged ? ["charge_card approved"] : []);
      expect(resumed.log.map((entry) => entry.status)).toEqual(["ok", charged ? "ok" : "denied"]);
    }
  });

  it("the resuming agent's policy applies: an approval cannot make a call its hook denies", async () => {
    const first = await runGated(lookupThenCharge, {
      tools: [echoTool("lookup").tool, echoTool("charge_card").tool],
      approval: interruptCharges,
    });
    const stop = first.stops[0] as Extract<GateStop, { kind: "interrupt" }>;
    for (const [answer, expected, charged] of [
      [{ approved: false, reason: "this agent never charges" }, "denied: this agent never charges", 0],
      [false, "denied: ", 0],
      ["interrupt", "7", 1],
    ] as const) {
      const charge = echoTool("charge_card");
      const resumed = await runGated(lookupThenCharge, {
        tools: [echoTool("lookup").tool, charge.tool],
        approval: () => answer,
        logged: first.log,
        pending: { call: stop.pending, decision: true },
      });
      expect(String(resumed.run.result)).toContain(expected);
      expect(charge.calls).toHaveLength(charged);
    }
  });

  it("a call that differs from the log stops the program before it reaches the tool", async () => {
    const logged: CallLogEntry[] = (
      await runGated('lookup(value=1)\nlookup(value=2)\nprint("RESULT: x")', {
        tools: [echoTool("lookup").tool],
      })
    ).log;
    const lookup = echoTool("lookup");
    const { run, stops } = await runGated('lookup(value=1)\nlookup(value=3)\nprint("RESULT: x")', {
      tools: [lookup.tool],
      logged,
      offline: true,
    });
    expect(lookup.calls).toHaveLength(0);
    expect(run.result).toBeUndefined();
    const stop = stops[0] as Extract<GateStop, { kind: "diverged" }>;
    expect(ReplayDivergenceError.isInstance(stop.error)).toBe(true);
    expect(stop.error.logged).toEqual({ sequence: 2, tool: "lookup", args: '{"value":2}' });
    expect(stop.error.made).toEqual({ sequence: 2, tool: "lookup", args: '{"value":3}' });
    expect(stop.error.message).toContain('lookup({"value":3})');
  });
});
