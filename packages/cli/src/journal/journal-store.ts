import { lstat } from "node:fs/promises";
import { dirname } from "node:path";
import type { RunState } from "@codeaction/core";
import { currentOwner, ownerLiveness } from "@codeaction/sandbox/internal";
import { CliError } from "../errors/cli-error.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { appendHoldingLock, journalSettings } from "./append.ts";
import { withJournalLock } from "./journal-file.ts";
import { readJournal } from "./read-journal.ts";
import { checkJournalChain, checkKeptState } from "./resume-check.ts";
import { findWaitingRun } from "./resume-record.ts";
import { type JournalTaker, lastTake, type Take, takenRecord } from "./taken-record.ts";

/** A waiting run as `take` hands it out: its question and its checked, signed state. */
export type TakenRun = { runId: string; question?: string; state: RunState };

/**
 * The journal as the store `codeaction resume` takes its runs from. Like core's `RunStore.take()`,
 * `take` hands a waiting run's state out once: of two processes taking the same run, one gets it.
 * It is not a `RunStore`: its states are saved by `ask` as part of its run records (no `save`), and
 * a take that cannot hand the state out says why (a CliError) instead of answering undefined.
 */
export type JournalStore = { take(runId: string): Promise<TakenRun> };

export type JournalStoreOptions = {
  env: NodeJS.ProcessEnv;
  /** The resume secret the states are signed with (checked before a state is taken). */
  secret: string;
  /** Who takes (default: this process). */
  taker?: Partial<JournalTaker> & { pid: number };
  /** Whether a taker is gone (default: takerGone). */
  takerGone?: (taker: Take) => boolean;
};

const readFix = "Pass --journal FILE (the journal ask wrote).";

/**
 * The journal at `path` (with its rotated files) as a store. `take(runId)`, under the journal's
 * lock: reads the journal, verifies its chain, finds the run's waiting state (its last record must
 * be the interrupted one), checks the state's signature and run id, and refuses a run another live
 * process took and has not answered yet; then appends a taken line (run id, the state's nonce, this
 * process's pid, start time, pid namespace, host and boot id) to the same chain and returns the state. The take ends when the
 * run's next record is journaled (the answer, a refusal, or a new waiting state); a taker that is
 * gone (crashed, killed) before that leaves the run to be taken again.
 */
export function createJournalStore(path: string, options: JournalStoreOptions): JournalStore {
  const taker = options.taker ?? currentOwner();
  const gone = options.takerGone ?? takerGone;
  return {
    async take(runId) {
      const settings = journalSettings(options.env);
      // No folder, no journal: reading says so (the lock would be a file in a missing folder).
      if ((await lstat(dirname(path)).catch(() => undefined)) === undefined) await readJournal(path, readFix);
      const failure = (file: string, problem: string, cause: unknown) =>
        takeFailed(runId, file, problem, cause);
      return withJournalLock(
        path,
        async () => {
          const read = await readJournal(path, readFix);
          checkJournalChain(read, path, options.env);
          const run = findWaitingRun(read.lines, runId, path);
          // The state is checked (signature, run id) before anything else is worth doing.
          const state = checkKeptState(run.state, runId, options.secret);
          const nonce = state.nonce ?? state.signature ?? "";
          const held = lastTake(read.lines, runId, nonce);
          if (held !== undefined && !gone(held)) throw takenError(runId, held);
          await appendHoldingLock(path, takenRecord(runId, nonce, taker), settings).catch((error) => {
            throw CliError.isInstance(error) ? error : failure(path, (error as Error).message, error);
          });
          return { runId, ...(run.question === undefined ? {} : { question: run.question }), state };
        },
        failure,
      );
    },
  };
}

/** The journal's lock could not be taken, or the taken line not written: nothing was resumed. */
function takeFailed(runId: string, path: string, problem: string, cause: unknown): CliError {
  return new CliError(
    `codeaction resume could not take run ${runId} from the journal ${path}: ${problem}. Nothing was resumed; resume again once that is mended.`,
    { code: "journal", cause },
  );
}

/**
 * Whether the process that took a run is gone, seen from here (the sandbox's ownerLiveness: on this
 * machine and pid namespace by its pid and start time). A taker that cannot be judged from here
 * (another machine or pid namespace) does not hold the run: there the state's single use (its nonce,
 * recorded in runs.jsonl.used-states/) is what keeps its call to once.
 */
export function takerGone(taker: Take): boolean {
  return ownerLiveness(taker) !== "alive";
}

function takenError(runId: string, held: Take): CliError {
  return new CliError(
    `Run ${runId} is being resumed by another codeaction resume (process ${held.pid}, which took it at ${escapeForTerminal(held.at)}): a run is resumed by one process at a time. Wait for that one to finish (it journals the answer); if it hangs, stop it (kill ${held.pid}) and resume again.`,
    { code: "resume-taken" },
  );
}
