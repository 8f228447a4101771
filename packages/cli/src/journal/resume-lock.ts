import { createHash } from "node:crypto";
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";
import { takeProcessLock } from "@codeaction/core/durable";
import { CliError } from "../errors/cli-error.ts";
import { ensureJournalFolder } from "./journal-file.ts";

/**
 * The lock one `codeaction resume` holds on run `runId` from before it reads the journal until the
 * resumed run is journaled, so that two resumes of the same run cannot both make the waiting call:
 * the second is refused at once. It is a file beside the journal holding the resumer's pid; a lock
 * whose process is gone (killed, crashed) is taken over. Returns the release. With no journal folder
 * there is no journal and nothing to lock (reading the journal then says so).
 */
export async function holdResumeLock(journal: string, runId: string): Promise<() => Promise<void>> {
  if ((await lstat(dirname(journal)).catch(() => undefined)) === undefined) return async () => {};
  await ensureJournalFolder(journal);
  const lockPath = `${journal}.resume-${lockName(runId)}.lock`;
  const lock = await takeProcessLock(lockPath);
  if ("release" in lock) return lock.release;
  throw new CliError(
    `Run ${runId} is being resumed by another codeaction resume (process ${lock.heldBy}, holding ${lockPath}): a run is resumed by one process at a time. Wait for that one to finish (it journals the answer); if no codeaction resume is running, remove ${lockPath}.`,
    { code: "resume-locked" },
  );
}

/** The run id as a file name part: as it is when it is one the agent makes, else a digest of it. */
function lockName(runId: string): string {
  if (/^[A-Za-z0-9_-]{1,64}$/.test(runId)) return runId;
  return createHash("sha256").update(runId).digest("hex").slice(0, 32);
}
