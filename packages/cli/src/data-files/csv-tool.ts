import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { CsvColumn } from "./column-scan.ts";
import { pythonTypeName } from "./column-types.ts";
import type { CsvTable, TypingSample } from "./csv-table.ts";
import { howToRead } from "./data-formats.ts";
import { type CsvRow, openRowReader, type RowReader } from "./row-reader.ts";

/**
 * About how much JSON one call may return. The rows cross the bridge as JSON, whose answers are
 * capped at 16 MiB (core's maxResponseBytes); the estimate errs high, and 12 MiB leaves room for it.
 */
export const maxResultBytesPerCall = 12 * 1024 * 1024;

/** An estimate of one row's JSON size: its CSV text plus, per column, the quoted key and separators. */
export function estimatedRowBytes(table: CsvTable): number {
  if (table.rowCount === 0) return 0;
  const keys = table.columns.reduce((total, column) => total + JSON.stringify(column.name).length + 4, 2);
  // A CSV's own size is its text; parquet and xlsx are compressed, so their scanned text size counts.
  const textBytes = table.format === "csv" || table.format === "tsv" ? table.sizeBytes : table.textBytes;
  return (textBytes / (table.rowCount + 1)) * 1.2 + keys;
}

/** How many rows one call may return: every row when they fit in maxResultBytesPerCall, else a page. */
export function rowsPerCall(table: CsvTable): number {
  const rowBytes = estimatedRowBytes(table);
  if (table.rowCount === 0 || table.rowCount * rowBytes <= maxResultBytesPerCall)
    return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.floor(maxResultBytesPerCall / rowBytes));
}

/** How many calls reading every row takes (1 for a file that fits in one call). */
export function callsToReadAll(table: CsvTable): number {
  const pageSize = rowsPerCall(table);
  return Number.isFinite(pageSize) ? Math.ceil(table.rowCount / pageSize) : 1;
}

function describeColumn(column: CsvColumn): string {
  let text = `${column.name} (${pythonTypeName(column.type)}`;
  if (column.isoDates) text += ", an ISO date YYYY-MM-DD";
  if (column.categories)
    text += `, one of ${column.categories.map((value) => JSON.stringify(value)).join(", ")}`;
  if (column.hasEmpty && column.type !== "empty") text += ", or None when blank";
  return `${text})`;
}

/** What a table typed from its first rows says about them, and what that means for the rest. */
function describeSample(table: CsvTable, sample: TypingSample): string {
  const rows = `the first ${sample.rows.toLocaleString("en-US")} rows (${(sample.bytes / 1024 ** 2).toFixed(1)} MiB${table.format === "parquet" ? " of text" : ""})`;
  if (table.format === "parquet") {
    // The schema types every cell, so only the listed values and blanks are the sample's.
    return `The types are the file's schema; the values listed and "or None when blank" are from a sample, ${rows}, and later rows may hold other values or blanks (a later int beyond 2^53 comes as its text).`;
  }
  const what = table.format === "jsonl" ? "The columns (the keys), the types" : "The types";
  const keys = table.format === "jsonl" ? "; a key first seen later is not among the columns" : "";
  return `${what} (and the values listed) are from a sample, ${rows}; a later cell that does not fit its column's type comes as its text${keys}.`;
}

/**
 * What the model sees of a data file: names every column with its type and the row count, and,
 * when the file is also in the sandbox, where and how to read it directly.
 */
export function describeTable(table: CsvTable, options: { dataPath?: string } = {}): string {
  const fileName = table.file.split(/[\\/]/).pop() ?? table.file;
  const about = table.sample?.rowCountEstimated ? "about " : "";
  const rowText = `${about}${table.rowCount.toLocaleString("en-US")} row${table.rowCount === 1 ? "" : "s"}`;
  const lines = [
    `Return the rows of ${fileName} (${rowText}) as a list of dicts, one per row, with typed values: ${table.columns.map(describeColumn).join(", ")}.`,
  ];
  if (table.sample) lines.push(describeSample(table, table.sample));
  const pageSize = rowsPerCall(table);
  if (Number.isFinite(pageSize)) {
    lines.push(
      `The file is large: one call returns at most ${pageSize.toLocaleString("en-US")} rows, so read it in pages with offset= and limit=.`,
    );
  } else {
    lines.push("With no arguments it returns every row; offset= and limit= return a slice.");
  }
  if (options.dataPath) {
    lines.push(
      `The file is also in the sandbox, read-only, at ${options.dataPath}: for large files read it directly with ${howToRead(table.format, options.dataPath)}.`,
    );
  }
  return lines.join(" ");
}

/** The Python function name for a table: `load_orders` for orders.csv. */
export function loaderName(table: CsvTable): string {
  return `load_${table.name}`;
}

/**
 * A CSV as a LangChain tool `load_<name>(offset=0, limit=None)` returning typed rows. The file is
 * read as a stream; a call that starts where the previous one stopped reads on from there (paging
 * through a big file is one pass), any other call starts a new pass. Calls run one at a time.
 */
export function csvTool(table: CsvTable, options: { name?: string; dataPath?: string } = {}) {
  const pageSize = rowsPerCall(table);
  const queued = pageReader(table);
  const tooMany = (rows: number | string) =>
    new Error(
      `${loaderName(table)} would return ${rows} rows, more than the ${pageSize} one call may return; pass limit=${pageSize} and step offset= by it`,
    );
  // A sampled table's row count comes from line breaks: the page itself tells whether the rest fits.
  const readSampledTable = async (offset: number, limit = Number.POSITIVE_INFINITY) => {
    if (limit <= pageSize) return queued(offset, limit);
    const rows = await queued(offset, pageSize + 1);
    if (rows.length > pageSize) throw tooMany(`over ${pageSize}`);
    return rows;
  };
  return tool(
    async (args: { offset?: number; limit?: number }): Promise<CsvRow[]> => {
      const offset = args.offset ?? 0;
      if (table.sample) return readSampledTable(offset, args.limit);
      const remaining = Math.max(0, table.rowCount - offset);
      const limit = args.limit ?? remaining;
      if (limit > pageSize && remaining > pageSize) throw tooMany(Math.min(limit, remaining));
      return queued(offset, limit);
    },
    {
      name: options.name ?? loaderName(table),
      description: describeTable(table, options.dataPath ? { dataPath: options.dataPath } : {}),
      schema: loaderSchema(pageSize),
    },
  );
}

/** The loader's arguments: offset=, and limit= (at most a page when the file is large). */
function loaderSchema(pageSize: number) {
  return z.object({
    offset: z.number().int().min(0).default(0).describe("Rows to skip from the start."),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        Number.isFinite(pageSize)
          ? `Most rows to return (at most ${pageSize}).`
          : "Most rows to return (default: every row).",
      ),
  });
}

/**
 * Reads `limit` rows from `offset`, one call at a time: a call that starts where the previous one
 * stopped reads on from there, any other call opens a new pass over the file.
 */
function pageReader(table: CsvTable): (offset: number, limit: number) => Promise<CsvRow[]> {
  let reader: RowReader | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const readPage = async (offset: number, limit: number): Promise<CsvRow[]> => {
    if (!reader || reader.position !== offset) {
      await reader?.close();
      reader = openRowReader(table, { offset });
    }
    try {
      const rows = await reader.read(limit);
      if (rows.length < limit) {
        await reader.close();
        reader = undefined;
      }
      return rows;
    } catch (error) {
      reader = undefined;
      throw error;
    }
  };
  return (offset, limit) => {
    const page = queue.then(() => readPage(offset, limit));
    queue = page.catch(() => undefined);
    return page;
  };
}
