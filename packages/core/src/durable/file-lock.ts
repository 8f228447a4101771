import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { link, lstat, open, stat, unlink } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigError } from "../errors/config-error.ts";

/** How long to wait for a lock, and when a held one is left from a process that died. */
export type FileLockTimes = { waitMs: number; staleMs: number };

const defaultTimes: FileLockTimes = { waitMs: 15_000, staleMs: 30_000 };

/**
 * Runs `work` holding the lock file `lockPath` (created O_EXCL, never through a link, 0600, holding
 * the pid): one writer at a time across processes. A lock older than `staleMs` is taken over (a write
 * takes milliseconds); after `waitMs` an Error names the lock file to remove if no process holds it.
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => Promise<T>,
  times: FileLockTimes = defaultTimes,
): Promise<T> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const deadline = Date.now() + times.waitMs;
  for (;;) {
    try {
      const handle = await open(lockPath, flags, 0o600);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if ((await lstat(lockPath).catch(() => undefined))?.isSymbolicLink()) throw plantedLink(lockPath);
      const held = await stat(lockPath).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > times.staleMs) {
        await unlink(lockPath).catch(ignoreMissing);
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`another process holds the lock ${lockPath}; if none is running, remove it`);
      }
      await sleep(20);
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}

/** A symbolic link where a lock file goes: not one codeaction made, and never followed. */
function plantedLink(lockPath: string, cause?: unknown): ConfigError {
  return new ConfigError({
    message: `the lock file ${lockPath} is a symbolic link, which codeaction never makes: someone or something planted it there, and a lock is never taken through a link. Remove it (rm ${lockPath}) and check who can write its folder.`,
    ...(cause === undefined ? {} : { cause }),
  });
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}

/** A lock this process holds until it calls `release`, or the process that holds it. */
export type ProcessLock = { release: () => Promise<void> } | { heldBy: number };

/**
 * Takes the lock file `lockPath` for as long as this process works (until `release`), or answers at
 * once which live process holds it. The file holds the holder's pid and appears whole (written to a
 * temporary name, then hard-linked: the link fails if the lock exists). A lock whose pid is gone is
 * stale (its holder died) and taken over; the check and the take-over are one step under
 * `withFileLock`, so that two takers cannot both remove a stale lock and both hold it.
 */
export async function takeProcessLock(lockPath: string): Promise<ProcessLock> {
  const temporary = `${lockPath}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(`${process.pid}\n`);
  } finally {
    await handle.close();
  }
  try {
    return await withFileLock(`${lockPath}.take`, async () => {
      for (;;) {
        try {
          await link(temporary, lockPath);
          return { release: () => unlink(lockPath).catch(ignoreMissing) };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
        const holder = await lockHolder(lockPath);
        if (holder !== undefined && processLives(holder)) return { heldBy: holder };
        await unlink(lockPath).catch(ignoreMissing);
      }
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The pid a lock file holds, or undefined (gone, or not a pid). Read without following a link. */
async function lockHolder(lockPath: string): Promise<number | undefined> {
  let text: string;
  try {
    const handle = await open(lockPath, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await handle.readFile({ encoding: "utf8" });
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "EMLINK") throw plantedLink(lockPath, error);
    throw error;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process with this pid exists (signal 0 checks without sending; EPERM: it exists, another user's). */
function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
