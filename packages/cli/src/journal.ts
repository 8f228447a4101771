import { appendFile, mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { CliError } from "./errors/cli-error.ts";

/** Where `ask` appends its run records unless told otherwise: in the working folder. */
export const defaultJournalPath = ".codeaction/runs.jsonl";

/**
 * Appends one run record as one JSON line (one write call, so concurrent runs do not interleave
 * within a line). Creates the folder. Throws a CliError naming the path when it cannot write.
 */
export async function appendToJournal(path: string, record: unknown): Promise<string> {
  const absolute = resolve(path);
  const line = `${JSON.stringify(record)}\n`;
  try {
    await mkdir(dirname(absolute), { recursive: true });
    await appendFile(absolute, line, { encoding: "utf8", mode: 0o600 });
  } catch (error) {
    throw new CliError(
      `Cannot append the run record to the journal ${path}: ${(error as Error).message}. Pass --journal PATH for another file, or --no-journal.`,
      { code: "journal", cause: error },
    );
  }
  return absolute;
}
