// Host files placed read-only in a container before its program runs: the one command that writes
// them (a session's spawn uses it for code-action's data files; a prelaunch's worker, which has no
// session, streams files through it itself).
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { posix } from "node:path";
import { pipeline } from "node:stream/promises";
import { destroyStream } from "./docker-operations.ts";
import type { EngineContainer } from "./engine/container-engine.ts";
import { startExec, waitForExecExit } from "./exec.ts";
import { captureOutput } from "./exec-stream.ts";

/** A host file to place in the container: where it comes from and its absolute path inside. */
export type FileToPlace = { hostPath: string; containerPath: string };

/** A file placed in a container before it was handed out: its path inside and its size. */
export type PlacedFile = { containerPath: string; bytes: number };

/** How far the placement of one file has come (every 4 MiB, and at its end). */
export type PlacingProgress = { containerPath: string; bytesCopied: number; totalBytes: number };

const reportEveryBytes = 4 * 1024 * 1024;

/** Each read of a placed file: the exec's stream takes big writes at twice the speed of 64 KiB ones. */
const placeChunkBytes = 1024 * 1024;

/**
 * The command (argv, to run with cwd "/") that streams its stdin into `containerPath`, mode 0444,
 * through a temporary name in the same folder, so no one sees a partial file under the final name.
 * The folder is made writable first (it may be sealed by an earlier placement: it is the sandbox
 * user's own) and, with `sealFolder`, read-only (0555) after.
 */
export function readOnlyFileCommand(containerPath: string, options: { sealFolder: boolean }): string[] {
  const script = [
    "set -e",
    'mkdir -p "$2"',
    'chmod 0755 "$2"',
    'cat > "$2/.$1.part"',
    'chmod 0444 "$2/.$1.part"',
    'mv -f "$2/.$1.part" "$2/$1"',
    ...(options.sealFolder ? ['chmod 0555 "$2"'] : []),
  ].join("\n");
  const { dir, base } = posix.parse(containerPath);
  return ["/bin/sh", "-c", script, "codeaction-place", base, dir];
}

/**
 * Streams each file into the container (a prelaunch's worker: no session, no kill helper; the
 * command is ours and the program has not started), sealing the folder after the last; `onPlaced`
 * hears each file once it is in place. Rejects with the command's stderr (such as "No space left
 * on device") when one fails.
 */
export async function placeHostFiles(
  container: EngineContainer,
  files: FileToPlace[],
  options: {
    guard: boolean;
    onProgress?: (progress: PlacingProgress) => void;
    onPlaced: (file: PlacedFile) => void;
  },
): Promise<void> {
  for (const [index, file] of files.entries()) {
    const { size } = await stat(file.hostPath);
    const argv = readOnlyFileCommand(file.containerPath, { sealFolder: index === files.length - 1 });
    const { exec, stream } = await startExec(container, {
      argv,
      cwd: "/",
      stdin: true,
      guard: options.guard,
    });
    const output = captureOutput(stream, { stdout: 4096, stderr: 4096 });
    const source = createReadStream(file.hostPath, { highWaterMark: placeChunkBytes });
    const report = (bytesCopied: number) =>
      options.onProgress?.({ containerPath: file.containerPath, bytesCopied, totalBytes: size });
    let nextReport = reportEveryBytes;
    source.on("data", () => {
      if (source.bytesRead < nextReport || source.bytesRead >= size) return;
      report(source.bytesRead);
      nextReport = source.bytesRead + reportEveryBytes;
    });
    const copying = pipeline(source, stream).then(
      () => true,
      () => false,
    );
    // A command that ended early (a full disk) reads no more of its stdin: stop writing then.
    const copied = await Promise.race([copying, output.ended.then(() => false)]);
    if (!copied) {
      source.destroy();
      destroyStream(stream);
    }
    await output.ended;
    const exitCode = await waitForExecExit(exec);
    if (exitCode !== 0) {
      const problem = output.stderr.contents().toString("utf8").trim() || `exit ${exitCode}`;
      throw new Error(`placing ${file.hostPath} at ${file.containerPath} failed: ${problem}`);
    }
    report(size);
    options.onPlaced({ containerPath: file.containerPath, bytes: size });
  }
}
