// Host files placed read-only in a container before its program runs: where each goes (the one
// mapping from a host file to its path inside) and the one routine that streams them in, used by a
// prelaunch's worker (no session yet) and by `session.placeFiles` (the turn's data files).
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { posix } from "node:path";
import { pipeline } from "node:stream/promises";
import type { EngineContainer } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { FilePlacementError } from "../errors/file-placement-error.ts";
import { startExec, waitForExecExit } from "../process/exec.ts";
import { captureOutput } from "../process/exec-connection.ts";
import type { FileToPlace } from "./placement-path.ts";

/**
 * A host file placed in a container: its path inside, its size, and how it got there (bind-mounted
 * read-only at the container's start on a local engine, or copied: files/mount-files.ts).
 */
export type PlacedFile = { containerPath: string; bytes: number; how?: "mounted" | "copied" };

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

/** Where one placement streams its files: a started container, with or without the seccomp guard. */
export type PlacementTarget = { container: EngineContainer; guard: boolean };

/**
 * THE placement routine: streams each file into the container through an exec's stdin (the root
 * file system stays read-only), sealing the folder after the last; `onPlaced` hears each file once
 * it is in place. Used by a prelaunch's worker (no session yet; the command is ours and no program
 * has started) and by `session.placeFiles`. Rejects with a FilePlacementError (its `noSpace` set
 * for a full /workspace) when one fails.
 */
export async function placeFiles(
  target: PlacementTarget,
  files: readonly FileToPlace[],
  options: { onProgress?: (progress: PlacingProgress) => void; onPlaced?: (file: PlacedFile) => void },
): Promise<void> {
  for (const [index, file] of files.entries()) {
    const bytes = await placeOneFile(target, file, {
      sealFolder: index === files.length - 1,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    options.onPlaced?.({ containerPath: file.containerPath, bytes, how: "copied" });
  }
}

/** Streams one file in; resolves with its size once it is in place under its final name. */
async function placeOneFile(
  target: PlacementTarget,
  file: FileToPlace,
  options: { sealFolder: boolean; onProgress?: (progress: PlacingProgress) => void },
): Promise<number> {
  const { size } = await stat(file.hostPath);
  const argv = readOnlyFileCommand(file.containerPath, { sealFolder: options.sealFolder });
  const { exec, stream } = await startExec(target.container, {
    argv,
    cwd: "/",
    stdin: true,
    guard: target.guard,
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
    const reason = output.stderr.contents().toString("utf8").trim() || `exit ${exitCode}`;
    throw new FilePlacementError({ ...file, bytes: size, reason });
  }
  report(size);
  return size;
}
