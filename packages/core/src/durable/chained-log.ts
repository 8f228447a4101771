import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { type ChainEnd, chainEndOf, chainedLine } from "./record-chain.ts";

// Appending to a chained log (record-chain.ts): the file run store's log and the codeaction command's
// journal are both this, each with its own file checks, rotation and lock around it.

/** How much of the file's end is read to find the chain's last link (it ends the last line). */
const tailBytes = 1024;

/** How `appendChained` appends: the chain's key, the size that rotates a file, the rotation and the file's opening. */
export type ChainedAppend = {
  /** The HMAC key of the chain; without it the lines are chained by SHA-256 hashes. */
  key: string | undefined;
  /** A file the line would take past this many bytes is rotated first. */
  maxBytes: number;
  /** Moves the full file aside; the next line starts a new file, linked to the rotated file's last. */
  rotate: (path: string) => Promise<void>;
  /** Opens the file to read and append (`exclusive`: the file after a rotation, which must be new). */
  open?: (path: string, options: { exclusive: boolean }) => Promise<FileHandle>;
};

/**
 * Appends `record` as one line chained to the file's last line. The caller holds the log's lock:
 * reading the chain's end and appending to it must be one step.
 */
export async function appendChained(path: string, record: object, options: ChainedAppend): Promise<void> {
  const openLog = options.open ?? openChainedLog;
  let handle = await openLog(path, { exclusive: false });
  try {
    const { size } = await handle.stat();
    const end = size === 0 ? undefined : await readChainEnd(handle, size);
    const line = `${chainedLine(record, end, options.key)}\n`;
    if (size > 0 && size + Buffer.byteLength(line) > options.maxBytes) {
      await handle.close();
      await options.rotate(path);
      handle = await openLog(path, { exclusive: true });
    }
    await handle.write(line);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Opens a chained log to read and append: created 0600, never through a symbolic link (O_NOFOLLOW),
 * never blocking on a FIFO (O_NONBLOCK), and only a regular file (an older file readable by others is
 * made 0600). The errors are Node's (ELOOP for a link, ENXIO for a FIFO): callers word them.
 */
export async function openChainedLog(path: string, options: { exclusive: boolean }): Promise<FileHandle> {
  const flags =
    constants.O_RDWR |
    constants.O_APPEND |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    constants.O_NONBLOCK |
    (options.exclusive ? constants.O_EXCL : 0);
  const handle = await open(path, flags, 0o600);
  const found = await handle.stat();
  if (!found.isFile()) {
    await handle.close();
    throw Object.assign(new Error(`${path} is not a regular file`), { code: "ENOTREGULAR" });
  }
  if ((found.mode & 0o077) !== 0) await handle.chmod(0o600);
  return handle;
}

/** The chain's last link, read from the file's end. */
async function readChainEnd(handle: FileHandle, size: number): Promise<ChainEnd | undefined> {
  const length = Math.min(size, tailBytes);
  const buffer = Buffer.alloc(length);
  await handle.read(buffer, 0, length, size - length);
  return chainEndOf(buffer.toString("utf8"));
}
