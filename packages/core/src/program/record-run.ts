import type { HistoryEntry } from "../durable/history.ts";
import type { RunRecord } from "../durable/run-record.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { AgentResult, Attempt } from "../types.ts";

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
