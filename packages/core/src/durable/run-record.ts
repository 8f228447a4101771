import type { CallLogEntry } from "./call-log.ts";
import type { HistoryEntry } from "./history.ts";

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
