import { renderStubsModule } from "../code-action/python-stubs.ts";
import type { HistoryEntry } from "../steps/history.ts";
import type { ToolSpec } from "../tool-spec.ts";
import type { AgentResult, Attempt } from "../types.ts";
import type { CallLogEntry } from "./call-log.ts";

/**
 * A run as `replayRun()` re-executes it: the answering program, the stubs it ran with, its seed, its
 * call log and its RESULT. Plain JSON: keep it beside a test as a fixture (docs/durable-runs.md).
 */
export type RunRecord = {
  format: "codeaction.run-record";
  version: 1;
  runId: string;
  /** The seed of the program's `random` module. */
  seed: string;
  program: string;
  /** The `codeaction_tools` stubs the program ran with (its tools' functions), without the seed. */
  stubs: string;
  /** The names of the tools the stubs call. */
  tools: string[];
  callLog: CallLogEntry[];
  /** The RESULT the program printed. */
  result: string;
  /**
   * With steps: the programs that ran before it in the run's interpreter (each left it alive), in
   * order, with their call logs. A replay runs them first, in one interpreter.
   */
  steps?: HistoryEntry[];
};

/**
 * The record of an answered code-action turn (its answering attempt), for `replayRun()`. `tools` are
 * the agent's (`agent.tools`): the record keeps the stubs made from them, so a replay needs none.
 */
export function recordRun(result: AgentResult, tools: readonly ToolSpec[]): RunRecord {
  if (result.status === "interrupted" || result.pattern !== "code-action") {
    throw new TypeError(
      `recordRun takes an answered code-action result; this one is ${result.pattern === "code-action" ? "interrupted: resume it first" : `from the ${result.pattern} pattern`}.`,
    );
  }
  const answering = result.attempts.findLast(
    (attempt) => attempt.status === "ok" && attempt.result === result.answer,
  );
  if (!answering?.callLog)
    throw new TypeError("recordRun: the result has no answering attempt with a call log.");
  const steps = stepsBefore(result.attempts, answering);
  return {
    format: "codeaction.run-record",
    version: 1,
    runId: result.runId,
    seed: result.runId,
    program: answering.program,
    stubs: renderStubsModule([...tools]),
    tools: tools.map((tool) => tool.name),
    callLog: answering.callLog,
    result: answering.result ?? "",
    ...(steps.length > 0 ? { steps } : {}),
  };
}

/**
 * With steps, the programs the answering one found in its interpreter: the earlier attempts of the
 * run that left their interpreter alive (those carry `interpreterSummary`), after the last one that
 * ended it (its successor started afresh and re-executed those before, as they are listed here).
 */
function stepsBefore(attempts: readonly Attempt[], answering: Attempt): HistoryEntry[] {
  if (answering.step === undefined) return [];
  const before = attempts.slice(0, attempts.indexOf(answering));
  return before
    .filter((attempt) => attempt.interpreterSummary !== undefined && attempt.callLog !== undefined)
    .map((attempt) => ({
      program: attempt.program,
      callLog: attempt.callLog ?? [],
      exitCode: attempt.exitCode,
    }));
}
