import { constants } from "node:fs";
import { chmod, type FileHandle, lstat, mkdir, open } from "node:fs/promises";
import { ConfigError } from "./errors/config-error.ts";

// Every record codeaction writes for a person (a token, a saved chat, a run state) is one of these:
// created 0600, in a folder made 0700, never through a symbolic link, only a regular file. `hint`
// is the error's fix, in the caller's words ("remove it, or give your own with --token-file").

/**
 * Makes `path` a folder of this user's with mode 0700 (created with its parents when missing); a
 * link, a file or another user's folder in its place is a ConfigError ending with `hint`.
 */
export async function privateFolder(path: string, hint: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const found = await lstat(path);
  const ours = process.getuid === undefined || found.uid === process.getuid();
  if (!found.isDirectory() || !ours) {
    throw new ConfigError({
      message: `${path} is not a folder of this user (a link, a file or another user's folder), so nothing private is written there; ${hint}`,
    });
  }
  if ((found.mode & 0o777) !== 0o700) await chmod(path, 0o700);
}

/**
 * Writes `content` to `path`: created (or truncated) 0600, never through a symbolic link
 * (O_NOFOLLOW), never blocking on a FIFO (O_NONBLOCK), only a regular file; an existing file that
 * others could read is made 0600 first. `exclusive` refuses a file already there (O_EXCL: a fresh
 * temporary name), `sync` flushes it to the disk before the close. Failures are ConfigErrors naming
 * the cause and ending with `hint`. The folder is the caller's (privateFolder).
 */
export async function writePrivateFile(
  path: string,
  content: string,
  options: { hint: string; exclusive?: boolean; sync?: boolean },
): Promise<void> {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    constants.O_NONBLOCK |
    (options.exclusive ? constants.O_EXCL : constants.O_TRUNC);
  let file: FileHandle;
  try {
    file = await open(path, flags, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ELOOP" || code === "EMLINK"
        ? "is a symbolic link, and codeaction does not write through links"
        : code === "ENXIO"
          ? "is a FIFO or a socket, not a file"
          : `could not be written (${code ?? (error as Error).message})`;
    throw new ConfigError({ message: `${path} ${problem}; ${options.hint}`, cause: error });
  }
  try {
    const found = await file.stat();
    if (!found.isFile()) {
      throw new ConfigError({ message: `${path} is not a regular file; ${options.hint}` });
    }
    if ((found.mode & 0o077) !== 0) await file.chmod(0o600);
    await file.writeFile(content, "utf8");
    if (options.sync) await file.sync();
  } finally {
    await file.close();
  }
}
