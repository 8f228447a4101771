import type { InterruptedResult } from "@codeaction/core";
import type { LineOfFile } from "@codeaction/core/durable";
import { CliError } from "../errors/cli-error.ts";
import type { JournalRecord, KeptRun } from "./journal-record.ts";

/** The largest run state the journal keeps, in characters of JSON (a state holds the call log so far). */
export const resumeStateCharacters = 2 * 1024 * 1024;

/**
 * Puts an interrupted run's state into its record, as it is (it is signed: redacting or cutting it
 * would break the signature), when it is within `resumeStateCharacters`; else says why not.
 */
export function keepResumeState(record: JournalRecord, result: InterruptedResult): void {
  const { pending, state } = result.interrupt;
  const characters = JSON.stringify(state).length;
  if (characters > resumeStateCharacters) {
    record.resumeOmitted = `its state takes ${characters} characters of JSON, over the journal's ${resumeStateCharacters}`;
    return;
  }
  record.resume = { pending, state };
}

type Journaled = {
  runId?: string;
  status?: string;
  question?: string;
  resume?: KeptRun;
  resumeOmitted?: string;
  resumed?: { refused?: string };
};

/**
 * The kept state of run `runId`: its newest record must be the interrupted one (a later record of
 * the run means it was resumed already). Throws a CliError naming what the journal holds instead.
 */
export function findWaitingRun(lines: LineOfFile[], runId: string, journal: string): Journaled & KeptRun {
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    let run: Journaled;
    try {
      run = JSON.parse(lines[index]!.text) as Journaled;
    } catch {
      continue;
    }
    // A resume refused before anything started (another tool set, say) leaves the run waiting.
    if (run.runId !== runId || run.resumed?.refused !== undefined) continue;
    if (run.status !== "interrupted") {
      throw new CliError(
        `Run ${runId} does not wait for a decision: its last record in ${journal} says "${run.status}" (it was resumed already, or it ended). Only a run answered "later" can be resumed, once.`,
        { code: "journal" },
      );
    }
    if (!run.resume) {
      throw new CliError(
        `Run ${runId} cannot be resumed: ${run.resumeOmitted ?? "its record keeps no state"}.`,
        { code: "journal" },
      );
    }
    return { ...run, ...run.resume };
  }
  throw new CliError(
    `The journal ${journal} holds no run ${runId}. Give the run id codeaction ask (or chat) printed, or --journal FILE.`,
    { code: "journal" },
  );
}
