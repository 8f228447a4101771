import { stat } from "node:fs/promises";
import { basename } from "node:path";
import {
  FilePlacementError,
  placedFileName,
  placedFilesDirectory,
  type SandboxSession,
} from "@codeaction/sandbox";
import { CodeActionError } from "../errors/code-action-error.ts";

/** Where data files given to an agent appear inside each sandbox, read-only (the sandbox decides). */
export const dataDirectory = placedFilesDirectory;

/** A host file placed in every sandbox at /workspace/data/<name> (`placedFileName`). */
export type DataFile = { path: string; name: string; size: number };

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
    const name = placedFileName(path);
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

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The data files placed in a session's container by the sandbox's one placement routine
 * (`session.placeFiles`: what a prelaunch placed is not copied again); `onCopy` hears every 4 MiB
 * and each file's end. A failure is a data-file error, naming the disk limit when /workspace was full.
 */
export async function placeDataFiles(
  session: Pick<SandboxSession, "placeFiles">,
  files: DataFile[],
  onCopy?: (copy: DataFileCopy) => void,
): Promise<void> {
  try {
    await session.placeFiles(
      files.map((file) => file.path),
      {
        onProgress: ({ containerPath, bytesCopied, totalBytes }) =>
          onCopy?.({ name: basename(containerPath), bytesCopied, totalBytes }),
      },
    );
  } catch (error) {
    throw placementError(error, files);
  }
}

/** A failed placement as code-action's data-file error: the disk limit named when /workspace was full. */
function placementError(error: unknown, files: DataFile[]): unknown {
  if (!FilePlacementError.isInstance(error)) return error;
  const file = files.find((candidate) => candidate.path === error.hostPath);
  const size = file?.size ?? error.bytes;
  return dataFileError(
    error.noSpace
      ? `the data file ${error.hostPath} (${megabytes(size)}) did not fit in the sandbox's /workspace; raise sandbox.diskLimit`
      : `the data file ${error.hostPath} could not be placed at ${error.containerPath}: ${error.reason}`,
    error,
  );
}

export function dataFileError(message: string, cause?: unknown): CodeActionError {
  return new CodeActionError(`Data files: ${message}.`, { code: "data-file", ...(cause ? { cause } : {}) });
}
