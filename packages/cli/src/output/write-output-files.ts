import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { OutputFile } from "@codeaction/core";

/** What the journal keeps of a file that came back: no bytes, a hash to recognise them by. */
export type RecordedOutputFile = {
  name: string;
  size: number;
  mediaType: string;
  sha256: string;
  path?: string;
  /** The name in the container, when the file came back under another name. */
  renamedFrom?: string;
};

/** The default folder the files of a run go to: ./codeaction-out/<runId>. */
export const defaultOutputRoot = "codeaction-out";

export function recordOutputFile(file: OutputFile): RecordedOutputFile {
  const sha256 = createHash("sha256").update(file.bytes).digest("hex");
  return {
    name: file.name,
    size: file.size,
    mediaType: file.mediaType,
    sha256,
    ...(file.renamedFrom === undefined ? {} : { renamedFrom: file.renamedFrom }),
  };
}

/**
 * Writes the files of a run under `folder`, keeping their (already sanitised) sub-folders, and
 * returns where each went. A name that would still leave the folder is refused with an error,
 * never written.
 */
export async function writeOutputFiles(files: OutputFile[], folder: string): Promise<string[]> {
  const root = resolve(folder);
  const paths: string[] = [];
  for (const file of files) {
    const target = resolve(root, file.name);
    const inside = relative(root, target);
    if (inside === "" || inside.startsWith(`..${sep}`) || inside === "..") {
      throw new Error(`refusing to write ${JSON.stringify(file.name)}: it would land outside ${root}`);
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.bytes, { flag: "wx" });
    paths.push(target);
  }
  return paths;
}

/** The folder of one run's files: DIR/<runId> for `--out DIR`, else ./codeaction-out/<runId>. */
export function outputFolderFor(runId: string, options: { out?: string; cwd: string }): string {
  return join(resolve(options.cwd, options.out ?? defaultOutputRoot), runId);
}
