// Runs read-data-file-child.ts on a file in a child process of its own and returns its outcome.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export type ReadOutcome = {
  /** The child's peak resident memory (VmHWM, KiB) after the warm-up read and after the file's. */
  before: number;
  after: number;
  /** The reader's error message; unset when the file was read. */
  error?: string;
  milliseconds: number;
};

const child = fileURLToPath(new URL("read-data-file-child.ts", import.meta.url));

/** `file` read in a child process after `warmUp` (a small file of the same format); `tmpdir` is the child's TMPDIR. */
export async function readInChild(options: {
  warmUp: string;
  file: string;
  tmpdir: string;
}): Promise<ReadOutcome> {
  const { stdout } = await promisify(execFile)(process.execPath, [child, options.warmUp, options.file], {
    env: { ...process.env, TMPDIR: options.tmpdir },
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as ReadOutcome;
}
