import { bridgeDefaults } from "../bridge/bridge-options.ts";
import type { TurnContext } from "../code-action/turn-context.ts";
import { CallGate } from "../durable/call-gate.ts";
import { seededStubs } from "../durable/determinism.ts";
import type { HistoryEntry } from "./history.ts";
import type { LiveInterpreter } from "./live-interpreter.ts";

/**
 * Re-executes a history in a fresh interpreter: each program again, in order, every tool call
 * answered from its log (an offline call gate: a call the log does not hold, or holds with other
 * arguments, stops the program), and each must end as it did the first time. Returns undefined
 * when the interpreter holds the history's state again, else why it could not (it is then
 * half-restored and must go).
 */
export async function reexecute(
  context: TurnContext,
  interpreter: LiveInterpreter,
  past: { history: readonly HistoryEntry[]; seed: string },
): Promise<string | undefined> {
  const { options } = context;
  const { settings } = options;
  const stubsSource = seededStubs(context.rawStubsSource, past.seed);
  for (const [index, entry] of past.history.entries()) {
    const which = `program ${index + 1} of ${past.history.length}`;
    const unkept = entry.callLog.find((call) => call.status === "ok" && call.result === undefined);
    if (unkept) {
      return `${which}'s call to ${unkept.tool} returned more than the call log keeps (1 MiB a result, 8 MiB a program), so it cannot be answered again`;
    }
    context.signal.throwIfAborted();
    const stop = new AbortController();
    const onAbort = () => stop.abort(context.signal.reason);
    context.signal.addEventListener("abort", onAbort, { once: true });
    let stopped: string | undefined;
    const gate = new CallGate({
      runId: context.runId,
      tools: options.tools,
      logged: entry.callLog,
      offline: true,
      maxResultBytes: settings.maxResultBytes ?? bridgeDefaults.maxResponseBytes,
      stop: (reason) => {
        stopped = reason.kind === "diverged" ? reason.error.message : "the call gate stopped it";
        stop.abort(new Error(stopped));
      },
    });
    try {
      const run = await interpreter.run({
        program: entry.program,
        stubsSource,
        preimport: settings.preimport,
        tools: gate.tools,
        runId: context.runId,
        execTimeout: settings.execTimeout,
        maxToolCalls: Math.max(settings.maxToolCalls, entry.callLog.length),
        approval: gate.approval,
        signal: stop.signal,
        ...(context.logger ? { logger: context.logger } : {}),
      });
      context.signal.throwIfAborted();
      if (stopped !== undefined) return `${which} made another tool call than the first time (${stopped})`;
      if (!run.living) return `${which} did not run to its end again (${run.status})`;
      if (run.exitCode !== entry.exitCode) {
        return `${which} ended with exit code ${run.exitCode}, not ${entry.exitCode} as the first time`;
      }
    } finally {
      context.signal.removeEventListener("abort", onAbort);
    }
  }
  return undefined;
}
