import type { Agent, AgentResult, RunRecord as ReplayableRun } from "@codeaction/core";
import type { JournalRecord } from "./journal-record.ts";

/** The largest replay record (program, stubs, call log) the journal keeps, in characters of JSON. */
export const replayRecordCharacters = 512 * 1024;

/**
 * Puts what `codeaction replay` needs into the run record: the answering program, its stubs, its
 * seed and its call log (recordRun), when they fit in `replayRecordCharacters`; else says why not
 * in `replayOmitted`. A call whose result was over the call log's limit is kept as a digest only,
 * and such a run cannot be replayed (replay says so).
 */
export async function attachReplay(record: JournalRecord, result: AgentResult, agent: Agent): Promise<void> {
  if (result.pattern !== "code-action") return;
  const { recordRun } = await import("@codeaction/core");
  let replay: ReplayableRun;
  try {
    replay = recordRun(result, agent.tools);
  } catch (error) {
    record.replayOmitted = (error as Error).message;
    return;
  }
  const characters = JSON.stringify(replay).length;
  if (characters > replayRecordCharacters) {
    record.replayOmitted = `the program, its stubs and its call log take ${characters} characters of JSON, over the journal's ${replayRecordCharacters}`;
    return;
  }
  record.replay = replay;
}
