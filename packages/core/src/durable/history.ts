import type { CallLogEntry } from "./call-log.ts";

/** A program that ran in a space's interpreter and left it alive: what re-execution replays. */
export type HistoryEntry = {
  program: string;
  /** Its calls, as they ended: a re-execution is answered from them (no tool is called again). */
  callLog: CallLogEntry[];
  /** How it ended (a re-execution must end the same way). */
  exitCode: number | null;
};
