import type { CsvTable } from "../../data-files/csv-table.ts";

/** The last attempt's output streams, as AttemptsExhaustedError carries them (`attempts`). */
type FailedAttempts = { attempts?: { stdout?: unknown; stderr?: unknown }[] };

/**
 * A question whose every program failed, told to an analyst: what failed in plain words, the
 * error line first (the last line of the traceback), and a fix in the data's own terms. On a
 * missing column (`KeyError: 'price'`) the fix names the columns each data file has.
 */
export function describeFailedPrograms(
  error: FailedAttempts,
  tables: CsvTable[],
): { message: string; fix: string; errorLine?: string } {
  const attempts = error.attempts ?? [];
  const last = attempts.at(-1);
  const errorLine = lastErrorLine(`${textOf(last?.stdout)}\n${textOf(last?.stderr)}`);
  const what =
    attempts.length <= 1
      ? "the program the model wrote failed"
      : `the model wrote a program ${attempts.length} times and each one failed`;
  const message = `The analysis did not work: ${what}.${
    errorLine ? ` The last one stopped with: ${errorLine}` : ""
  }`;
  const missing = /^KeyError: ['"](.+)['"]$/.exec(errorLine ?? "")?.[1];
  if (missing !== undefined && tables.length > 0) {
    const columns = tables.map(
      (table) =>
        `${table.file.split("/").at(-1)} has ${table.columns.map((column) => column.name).join(", ")}`,
    );
    return {
      message,
      errorLine,
      fix: `There is no column named "${missing}". ${columns.join("; ")}. Ask again using one of these names.`,
    };
  }
  return {
    message,
    ...(errorLine ? { errorLine } : {}),
    fix: "Ask again saying more: which file, which columns, and the result you want. What each program printed is under Output on this card.",
  };
}

/** The line that names the error: the last line of a Python traceback ("KeyError: 'price'"), if any. */
export function lastErrorLine(output: string): string | undefined {
  const lines = output.split("\n").map((line) => line.trim());
  const traceback = lines.lastIndexOf("Traceback (most recent call last):");
  if (traceback === -1) return undefined;
  return lines
    .slice(traceback + 1)
    .findLast((line) => /^[\w.]+(Error|Exception|Exit|Interrupt|Warning)\b/.test(line));
}

function textOf(value: unknown): string {
  return typeof value === "string" ? value : "";
}
