import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { CodeActionError } from "../errors/code-action-error.ts";
import { sanitiseName } from "./output-names.ts";

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

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function dataFileError(message: string, cause?: unknown): CodeActionError {
  return new CodeActionError(`Data files: ${message}.`, { code: "data-file", ...(cause ? { cause } : {}) });
}
