import { constants } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { basename, dirname, extname, join } from "node:path";
import type { LineOfFile } from "@codeaction/core/durable";
import { CliError } from "../errors/cli-error.ts";

/** A journal as one chain: its files oldest first, and every line of them in that order. */
export type ReadJournal = { files: { path: string; rotated: boolean }[]; lines: LineOfFile[] };

/**
 * Reads the journal `file` with its rotated files (runs.N.jsonl ... runs.1.jsonl, then runs.jsonl):
 * the records in the order they were written. Given a rotated file itself, only that file. Throws a
 * CliError naming the path and `fix` when there is no journal there.
 */
export async function readJournal(file: string, fix: string): Promise<ReadJournal> {
  const files = await chainFiles(file, fix);
  const lines: LineOfFile[] = [];
  for (const { path } of files) {
    const text = await readJournalFile(path);
    const split = text.split("\n");
    if (split.at(-1) === "") split.pop();
    for (const [index, line] of split.entries()) lines.push({ file: path, line: index + 1, text: line });
  }
  return { files, lines };
}

/**
 * One journal file's text, never through a symbolic link (a link planted as a rotated file could
 * hand the chain any records) and only a regular file.
 */
async function readJournalFile(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === "ELOOP" || code === "EMLINK"
        ? "is a symbolic link, and codeaction does not follow links for its journal: whatever it points to is not a record codeaction wrote there"
        : `could not be read (${code ?? (error as Error).message})`;
    throw new CliError(
      `The journal file ${path} ${problem}. Remove it (rm ${path}) or restore the file itself.`,
      {
        code: "journal",
        cause: error,
      },
    );
  }
  try {
    if (!(await handle.stat()).isFile()) {
      throw new CliError(`The journal file ${path} is not a regular file. Remove it (rm ${path}).`, {
        code: "journal",
      });
    }
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/** The journal and its rotated files, oldest first (runs.3.jsonl, runs.2.jsonl, runs.1.jsonl, runs.jsonl). */
async function chainFiles(file: string, fix: string): Promise<ReadJournal["files"]> {
  const extension = extname(basename(file));
  const stem = basename(file).slice(0, basename(file).length - extension.length);
  const rotated = new RegExp(`^${escapeRegExp(stem)}\\.(\\d+)${escapeRegExp(extension)}$`);
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch (error) {
    throw new CliError(`No journal at ${file}: ${(error as Error).message}. ${fix}`, {
      code: "journal",
      cause: error,
    });
  }
  if (!names.includes(basename(file)) && !rotated.test(basename(file))) {
    throw new CliError(`No journal at ${file}. ${fix}`, { code: "journal" });
  }
  // Given a rotated file itself, only that file is read.
  if (rotated.test(basename(file))) return [{ path: file, rotated: true }];
  const older = names
    .map((name) => ({ name, index: Number(rotated.exec(name)?.[1]) }))
    .filter((entry) => Number.isSafeInteger(entry.index))
    .sort((left, right) => right.index - left.index)
    .map((entry) => ({ path: join(dirname(file), entry.name), rotated: true }));
  return names.includes(basename(file)) ? [...older, { path: file, rotated: older.length > 0 }] : older;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
