import { renderStubsModule } from "../code-action/python-stubs.ts";
import type { ToolSpec } from "../tool-spec.ts";
import type { AgentResult } from "../types.ts";
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
  };
}
