import { constants } from "node:fs";
import { lstat, open, stat, unlink } from "node:fs/promises";
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
function plantedLink(lockPath: string): ConfigError {
  return new ConfigError({
    message: `the lock file ${lockPath} is a symbolic link, which codeaction never makes: someone or something planted it there, and a lock is never taken through a link. Remove it (rm ${lockPath}) and check who can write its folder.`,
  });
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}
