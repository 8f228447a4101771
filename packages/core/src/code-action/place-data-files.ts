// Code-action's data files streamed into a sandbox container (see data-files.ts for their names and
// checks). Its own module: it needs the sandbox package at run time, which data-files.ts does not.
import { createReadStream } from "node:fs";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type PlacedFile, readOnlyFileCommand, type SandboxSession } from "@codeaction/sandbox";
import { type DataFile, type DataFileCopy, dataDirectory, dataFileError, megabytes } from "./data-files.ts";

/** The size of each read of a data file on its way into the sandbox. */
const copyChunkBytes = 1024 * 1024;

/** A copy reports each time this many more bytes went in, and once at the end of each file. */
export const copyReportBytes = 4 * 1024 * 1024;

/**
 * Streams each data file into the session's container (through an exec's stdin; the root file
 * system stays read-only) at /workspace/data/<name>, mode 0444 in a 0555 folder. The container is
 * the program's own, so read-only guards against accidents; the host file is never writable.
 * Files a prelaunch placed (`session.filesPlaced()`, waited for: same place, same size) are not
 * copied again.
 * `onCopy` hears every copyReportBytes and at the end of each file (once for a file already placed).
 */
export async function placeDataFiles(
  session: Pick<SandboxSession, "spawn"> & { filesPlaced?: () => Promise<readonly PlacedFile[]> },
  files: DataFile[],
  onCopy?: (copy: DataFileCopy) => void,
): Promise<void> {
  // A prelaunch may have placed some already, while the host was loading (same place, same size).
  const placedFiles = (await session.filesPlaced?.()) ?? [];
  const placed = new Set(placedFiles.map((file) => `${file.containerPath}:${file.bytes}`));
  const missing: DataFile[] = [];
  for (const file of files) {
    if (!placed.has(`${dataDirectory}/${file.name}:${file.size}`)) missing.push(file);
    else onCopy?.({ name: file.name, bytesCopied: file.size, totalBytes: file.size });
  }
  for (const [index, file] of missing.entries()) {
    const argv = readOnlyFileCommand(`${dataDirectory}/${file.name}`, {
      sealFolder: index === missing.length - 1,
    });
    const child = session.spawn(argv, { cwd: "/" });
    let errors = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (errors.length < 4096) errors += chunk.toString("utf8");
    });
    child.stdout.resume();
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
