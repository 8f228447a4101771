import { bridgeDefaults } from "../bridge/bridge-options.ts";
import { CallGate, type GateStop } from "../bridge/call-gate.ts";
import type { CallLogEntry } from "../durable/call-log.ts";
import { seededStubs } from "../durable/determinism.ts";
import type { HistoryEntry } from "../durable/history.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { TurnContext } from "../turn/turn-context.ts";
import type { LiveInterpreter } from "./live-interpreter.ts";

/** What re-executing a history needs: the tools (never called), the stubs as first run, the limits. */
export type Reexecution = {
  history: readonly HistoryEntry[];
  tools: readonly ToolSpec[];
  /** The tools module as the history's first program ran with it (seeded). */
  stubsSource: string;
  runId: string;
  execTimeout: number;
  preimport?: readonly string[] | undefined;
  maxResultBytes?: number | undefined;
  signal?: AbortSignal | undefined;
  logger?: TurnContext["logger"];
};

/**
 * Re-executes a run's history in a fresh interpreter of the turn's: see reexecuteHistory. Returns
 * undefined when the interpreter holds the history's state again, else why it could not (it is
 * then half-restored and must go).
 */
export function reexecute(
  context: TurnContext,
  interpreter: LiveInterpreter,
  past: { history: readonly HistoryEntry[]; seed: string },
): Promise<string | undefined> {
  const { settings } = context.options;
  return reexecuteHistory(interpreter, {
    history: past.history,
    tools: context.options.tools,
    stubsSource: seededStubs(context.rawStubsSource, past.seed),
    runId: context.runId,
    execTimeout: settings.execTimeout,
    preimport: settings.preimport,
    maxResultBytes: settings.maxResultBytes,
    signal: context.signal,
    logger: context.logger,
  });
}

/**
 * Each program of a history again, in order, in one interpreter, every tool call answered from its
 * log (an offline call gate: a call the log does not hold, or holds with other arguments, stops
 * the program), and each must end as it did the first time. Undefined when all did; else why not.
 */
export async function reexecuteHistory(
  interpreter: LiveInterpreter,
  plan: Reexecution,
): Promise<string | undefined> {
  for (const [index, entry] of plan.history.entries()) {
    const which = `program ${index + 1} of ${plan.history.length}`;
    const unkept = entry.callLog.find((call) => call.status === "ok" && call.result === undefined);
    if (unkept) {
      return `${which}'s call to ${unkept.tool} returned more than the call log keeps (1 MiB a result, 8 MiB a program), so it cannot be answered again`;
    }
    plan.signal?.throwIfAborted();
    const refused = await reexecuteOne(interpreter, plan, entry);
    if (refused !== undefined) return `${which} ${refused}`;
  }
  return undefined;
}

async function reexecuteOne(
  interpreter: LiveInterpreter,
  plan: Reexecution,
  entry: HistoryEntry,
): Promise<string | undefined> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(plan.signal?.reason);
  plan.signal?.addEventListener("abort", onAbort, { once: true });
  let stopped: string | undefined;
  const gate = offlineGate(
    plan.runId,
    plan.tools,
    entry.callLog,
    (reason) => {
      stopped = reason.kind === "diverged" ? reason.error.message : "the call gate stopped it";
      stop.abort(new Error(stopped));
    },
    plan.maxResultBytes,
  );
  try {
    const run = await interpreter.run({
      program: entry.program,
      stubsSource: plan.stubsSource,
      ...(plan.preimport ? { preimport: plan.preimport } : {}),
      tools: gate.tools,
      runId: plan.runId,
      execTimeout: plan.execTimeout,
      maxToolCalls: Math.max(50, entry.callLog.length + 1),
      approval: gate.approval,
      signal: stop.signal,
      ...(plan.logger ? { logger: plan.logger } : {}),
    });
    plan.signal?.throwIfAborted();
    if (stopped !== undefined) return `made another tool call than the first time (${stopped})`;
    if (!run.living) return `did not run to its end again (${run.status})`;
    if (run.exitCode !== entry.exitCode) {
      return `ended with exit code ${run.exitCode}, not ${entry.exitCode} as the first time`;
    }
    return undefined;
  } finally {
    plan.signal?.removeEventListener("abort", onAbort);
  }
}

/** A call gate that answers every call from `logged` and stops the program at any other. */
export function offlineGate(
  runId: string,
  tools: readonly ToolSpec[],
  logged: readonly CallLogEntry[],
  stop: (reason: GateStop) => void,
  maxResultBytes: number = bridgeDefaults.maxResponseBytes,
): CallGate {
  return new CallGate({ runId, tools, logged, offline: true, maxResultBytes, stop });
}
