import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { SandboxSession } from "@codeaction/sandbox";
import { CodeActionError } from "../errors/code-action-error.ts";
import { sanitiseName } from "./output-files.ts";

/** Where data files given to an agent appear inside each sandbox, read-only. */
export const dataDirectory = "/workspace/data";

/** A host file placed in every sandbox at /workspace/data/<name>. */
export type DataFile = { path: string; name: string; size: number };

/** Where the host file at `path` appears inside each sandbox: /workspace/data/<its sanitised name>. */
export function dataFilePath(path: string): string {
  return `${dataDirectory}/${sanitiseName([basename(path)])}`;
}

/** Room left in /workspace for the bridge, the program's own files and /workspace/out. */
const workspaceReserveBytes = 16 * 1024 * 1024;

/**
 * Checks the data files before anything starts: each must be a readable regular file, and together
 * they must fit in the sandbox's /workspace (its diskLimit) with room to spare.
 */
export async function describeDataFiles(paths: string[], workspaceBytes: number): Promise<DataFile[]> {
  const files: DataFile[] = [];
  const taken = new Set<string>();
  for (const path of paths) {
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw dataFileError(
        `the data file ${path} cannot be read (${error.code ?? error.message}); check the path`,
        error,
      );
    });
    if (!info.isFile())
      throw dataFileError(`the data file ${path} is not a regular file; give a file, not a folder`);
    const name = sanitiseName([basename(path)]);
    if (taken.has(name)) {
      throw dataFileError(`two data files would both be /workspace/data/${name}; rename one of them`);
    }
    taken.add(name);
    files.push({ path, name, size: info.size });
  }
  const total = files.reduce((sum, file) => sum + file.size, 0);
  if (files.length > 0 && total + workspaceReserveBytes > workspaceBytes) {
    throw dataFileError(
      `the data files total ${megabytes(total)}, more than the sandbox's /workspace holds (${megabytes(workspaceBytes)}, less ${megabytes(workspaceReserveBytes)} kept free); raise sandbox.diskLimit (for example "4G"), or give fewer or smaller files`,
    );
  }
  return files;
}

/** The data files for the prompt: where they are and how big. */
export function describeDataFilesForPrompt(files: DataFile[]): string {
  const list = files.map((file) => `${dataDirectory}/${file.name} (${megabytes(file.size)})`).join(", ");
  return `Data files, read-only, to read directly (with csv, json or pandas): ${list}`;
}

/** How far the copy of one data file into the sandbox has come. */
export type DataFileCopy = { name: string; bytesCopied: number; totalBytes: number };

/** The size of each read of a data file on its way into the sandbox. */
const copyChunkBytes = 1024 * 1024;

/** A copy reports each time this many more bytes went in, and once at the end of each file. */
export const copyReportBytes = 4 * 1024 * 1024;

/**
 * Streams each data file into the session's container (through an exec's stdin; the root file
 * system stays read-only) at /workspace/data/<name>, mode 0444 in a 0555 folder. The container is
 * the program's own, so read-only guards against accidents; the host file is never writable.
 * `onCopy` hears every copyReportBytes and at the end of each file.
 */
export async function placeDataFiles(
  session: Pick<SandboxSession, "spawn">,
  files: DataFile[],
  onCopy?: (copy: DataFileCopy) => void,
): Promise<void> {
  for (const [index, file] of files.entries()) {
    const last = index === files.length - 1;
    const script = [
      "set -e",
      `mkdir -p ${dataDirectory}`,
      `cat > "${dataDirectory}/.$1.part"`,
      `chmod 0444 "${dataDirectory}/.$1.part"`,
      `mv -f "${dataDirectory}/.$1.part" "${dataDirectory}/$1"`,
      ...(last ? [`chmod 0555 ${dataDirectory}`] : []),
    ].join("\n");
    const child = session.spawn(["/bin/sh", "-c", script, "codeaction-data", file.name], { cwd: "/" });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (errors.length < 4096) errors += chunk.toString("utf8");
    });
    child.stdout.resume();
    // 1 MiB reads: the exec's stream takes big writes at twice the speed of the default 64 KiB ones.
    const source = createReadStream(file.path, { highWaterMark: copyChunkBytes });
    await pipeline(source, countCopied(file, onCopy), child.stdin).catch(() => undefined);
    const { exitCode } = await child.exit;
    if (exitCode !== 0) {
      const full = /no space left/i.test(errors);
      throw dataFileError(
        full
          ? `the data file ${file.path} (${megabytes(file.size)}) did not fit in the sandbox's /workspace; raise sandbox.diskLimit`
          : `the data file ${file.path} could not be placed at ${dataDirectory}/${file.name}: ${errors.trim() || `exit ${exitCode}`}`,
      );
    }
  }
}

/** A pass-through that reports the bytes gone through it (none without `onCopy`). */
function countCopied(file: DataFile, onCopy?: (copy: DataFileCopy) => void): Transform {
  let bytesCopied = 0;
  let nextReport = copyReportBytes;
  const report = () => onCopy?.({ name: file.name, bytesCopied, totalBytes: file.size });
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytesCopied += chunk.length;
      if (bytesCopied >= nextReport && bytesCopied < file.size) {
        report();
        nextReport = bytesCopied + copyReportBytes;
      }
      done(null, chunk);
    },
    flush(done) {
      report();
      done();
    },
  });
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function dataFileError(message: string, cause?: unknown): CodeActionError {
  return new CodeActionError(`Data files: ${message}.`, { code: "data-file", ...(cause ? { cause } : {}) });
}
