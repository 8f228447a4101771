// What one container holds of the host files placed in it (a prelaunch's, then each
// `session.placeFiles` call's), and the placing of what is missing: idempotent, one call at a time.
import { stat } from "node:fs/promises";
import type { LaunchedContainer } from "../container/launch.ts";
import { FilePlacementError } from "../errors/file-placement-error.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { type PlacedFile, type PlacingProgress, placeFiles } from "./place-files.ts";
import { type FileToPlace, filesToPlace } from "./placement-path.ts";

/** The files placed in one container, by their path inside (with the host file when this side placed it). */
export class ContainerPlacements {
  private readonly placed = new Map<string, PlacedFile & { hostPath?: string }>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly adopted: Promise<void>;
  private readonly launched: LaunchedContainer;

  constructor(launched: LaunchedContainer) {
    this.launched = launched;
    // A prelaunch's worker places its files after the hand-over: they count once it is done.
    // Files bind-mounted at the container's start are there from the first moment.
    for (const file of launched.mounted ?? []) this.placed.set(file.containerPath, file);
    this.adopted = (launched.placedFiles ?? Promise.resolve([])).then((files) => {
      for (const file of files)
        if (this.placed.get(file.containerPath)?.how !== "mounted") this.placed.set(file.containerPath, file);
    });
  }

  /** Everything placed so far, once the prelaunch's worker and any placement under way are done. */
  async list(): Promise<PlacedFile[]> {
    await this.adopted;
    await this.queue;
    return [...this.placed.values()].map(placedRecord);
  }

  /**
   * Places the host files that are not in the container yet (same path inside, same size, and the
   * same host file when this side placed it); one report at full size for each already there.
   * Calls run one after another. Resolves with each file's place, in the order given.
   */
  place(
    hostPaths: readonly string[],
    options: { before: () => Promise<void>; onProgress?: (progress: PlacingProgress) => void },
  ): Promise<PlacedFile[]> {
    const run = this.queue.then(async () => {
      await options.before();
      return this.placeMissing(hostPaths, options.onProgress);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async placeMissing(
    hostPaths: readonly string[],
    onProgress: ((progress: PlacingProgress) => void) | undefined,
  ): Promise<PlacedFile[]> {
    await this.adopted;
    const files = filesToPlace(hostPaths);
    refuseSharedPlaces(files);
    const sizes = await Promise.all(files.map(sizeOf));
    const missing = files.filter((file, index) => {
      const there = this.placed.get(file.containerPath);
      // A mounted file is the host file itself (it cannot be copied over); a copy is redone when its size changed.
      const same =
        there !== undefined &&
        (there.how === "mounted"
          ? there.hostPath === file.hostPath
          : there.bytes === sizes[index] &&
            (there.hostPath === undefined || there.hostPath === file.hostPath));
      if (same)
        onProgress?.({
          containerPath: file.containerPath,
          bytesCopied: there.bytes,
          totalBytes: there.bytes,
        });
      return !same;
    });
    const { container, guardExecs } = this.launched;
    await placeFiles({ container, guard: guardExecs }, missing, {
      ...(onProgress ? { onProgress } : {}),
      onPlaced: (placed) => {
        const hostPath = missing.find((file) => file.containerPath === placed.containerPath)?.hostPath;
        this.placed.set(placed.containerPath, { ...placed, ...(hostPath ? { hostPath } : {}) });
      },
    });
    return files.map((file) => placedRecord(this.placed.get(file.containerPath)!));
  }
}

/** What a caller sees of a placed file: its path inside, its size, and how it got there. */
function placedRecord(file: PlacedFile): PlacedFile {
  return { containerPath: file.containerPath, bytes: file.bytes, ...(file.how ? { how: file.how } : {}) };
}

/** Two host files whose names would meet at one path inside are refused, naming both. */
function refuseSharedPlaces(files: FileToPlace[]): void {
  const seen = new Map<string, string>();
  for (const file of files) {
    const earlier = seen.get(file.containerPath);
    if (earlier !== undefined && earlier !== file.hostPath) {
      throw new SandboxError(
        `The files ${earlier} and ${file.hostPath} would both be placed at ${file.containerPath}; rename one of them.`,
        { code: "invalid-option" },
      );
    }
    seen.set(file.containerPath, file.hostPath);
  }
}

async function sizeOf(file: FileToPlace): Promise<number> {
  try {
    return (await stat(file.hostPath)).size;
  } catch (error) {
    const reason = `it cannot be read on the host (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
    throw new FilePlacementError({ ...file, bytes: 0, reason });
  }
}
