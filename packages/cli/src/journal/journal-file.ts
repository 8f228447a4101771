import type { Stats } from "node:fs";
import { type FileHandle, lstat, mkdir, rename, unlink } from "node:fs/promises";
import { basename, dirname, extname } from "node:path";
import { openChainedLog, withFileLock } from "@codeaction/core/durable";
import { CliError } from "../errors/cli-error.ts";

// The journal's file operations: its folder made 0700, the file opened without following a link
// and made 0600, a lock for one writer at a time, and rotation at a size cap.

const fix = "Pass --journal PATH for another file, or --no-journal.";

export function journalError(path: string, problem: string, cause?: unknown): CliError {
  return new CliError(`Cannot write the journal ${path}: ${problem}. ${fix}`, {
    code: "journal",
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The journal's folder: created 0700 when missing (with its parents); an existing folder must be
 * a real folder, not a link to one (a link planted there would send the records elsewhere).
 */
export async function ensureJournalFolder(path: string): Promise<void> {
  const folder = dirname(path);
  let found: Stats;
  try {
    found = await lstat(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(folder, { recursive: true, mode: 0o700 });
    return;
  }
  if (found.isSymbolicLink()) {
    throw journalError(
      path,
      `its folder ${folder} is a symbolic link, and codeaction does not follow links for its journal; remove the link (rm ${folder})`,
    );
  }
  if (!found.isDirectory()) throw journalError(path, `${folder} is not a folder`);
}

/**
 * Opens the journal to append: created 0600, never through a symbolic link (O_NOFOLLOW), never
 * blocking on a FIFO (O_NONBLOCK), and only a regular file. An existing file readable by others
 * (an older journal) is made 0600.
 */
export async function openJournalFile(
  path: string,
  options: { exclusive?: boolean } = {},
): Promise<FileHandle> {
  try {
    return await openChainedLog(path, { exclusive: options.exclusive ?? false });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "EMLINK") {
      throw journalError(
        path,
        `it is a symbolic link, and codeaction does not follow links for its journal; remove the link (rm ${path})`,
        error,
      );
    }
    if (code === "ENXIO") throw journalError(path, "it is a FIFO or socket, not a file", error);
    if (code === "ENOTREGULAR") throw journalError(path, "it is not a regular file", error);
    throw journalError(path, (error as Error).message, error);
  }
}

/** `runs.jsonl` rotated for the nth time back: `runs.1.jsonl` is the newest rotated file. */
export function rotatedPath(path: string, index: number): string {
  const extension = extname(basename(path));
  const stem = extension === "" ? path : path.slice(0, -extension.length);
  return `${stem}.${index}${extension}`;
}

/**
 * Moves the journal aside: runs.jsonl becomes runs.1.jsonl, runs.1 becomes runs.2 and so on; the
 * file beyond `keep` is removed. Renames move links themselves, never what they point to.
 */
export async function rotateJournal(path: string, keep: number): Promise<void> {
  await unlink(rotatedPath(path, keep)).catch(ignoreMissing);
  for (let index = keep - 1; index >= 1; index -= 1) {
    await rename(rotatedPath(path, index), rotatedPath(path, index + 1)).catch(ignoreMissing);
  }
  await rename(path, rotatedPath(path, 1));
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}

/**
 * Runs `work` holding `<journal>.lock` (created O_EXCL, not through a link): reading the chain's end
 * and appending to it is one step, so concurrent runs each link to the record before theirs. A lock
 * that cannot be taken is a CliError from `failure` (default: journalError, for a write).
 */
export async function withJournalLock<T>(
  path: string,
  work: () => Promise<T>,
  failure: (path: string, problem: string, cause: unknown) => CliError = journalError,
): Promise<T> {
  let locked = false;
  try {
    return await withFileLock(`${path}.lock`, () => {
      locked = true;
      return work();
    });
  } catch (error) {
    if (locked || CliError.isInstance(error)) throw error;
    throw failure(path, (error as Error).message, error);
  }
}
