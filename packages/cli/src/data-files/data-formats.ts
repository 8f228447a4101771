import { createReadStream, type Stats, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { cellText } from "./cell-text.ts";
import type { SourceRecord } from "./source-record.ts";
import { checkSheetCells, checkZipUnpackedSize } from "./unpack-limits.ts";

/** The file formats `--file` reads. CSV and TSV go through csv-parse; the others through their own library. */
export type DataFormat = "csv" | "tsv" | "json" | "jsonl" | "xlsx" | "parquet";

/** A data file from the command line: `--csv FILE` (always CSV) or `--file FILE` (format from the extension); `path` is absolute. */
export type DataFileArgument = { path: string; format: DataFormat };

/**
 * `--csv` files first (each a CSV, whatever its name), then `--file` files by extension. Anything
 * but a regular file (a FIFO, a device, a socket, a folder) is refused here, before anything opens
 * it: reading a FIFO waits for a writer for ever. A missing file is reported where it is read.
 * A relative path is the command's folder's (`cwd`: CliContext.cwd), not the process's.
 */
export function dataFileArguments(
  options: { csv?: string[]; file?: string[] },
  cwd: string,
): DataFileArgument[] {
  const files = [
    ...(options.csv ?? []).map((path) => ({ path: resolve(cwd, path), format: "csv" as const })),
    ...(options.file ?? []).map((path) => {
      const absolute = resolve(cwd, path);
      return { path: absolute, format: formatFromPath(absolute) };
    }),
  ];
  for (const file of files) refuseUnlessRegular(file.path);
  return files;
}

function refuseUnlessRegular(file: string): void {
  let info: Stats;
  try {
    info = statSync(file);
  } catch {
    return;
  }
  if (info.isFile()) return;
  const kind = info.isFIFO()
    ? "a FIFO (named pipe)"
    : info.isDirectory()
      ? "a folder"
      : info.isSocket()
        ? "a socket"
        : "a device";
  throw new CsvInputError({
    file,
    problem: `this is ${kind}, not a regular file; only regular files are read (save the data to a file first)`,
  });
}

const formatsByExtension: Record<string, DataFormat> = {
  ".csv": "csv",
  ".tsv": "tsv",
  ".tab": "tsv",
  ".json": "json",
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".xlsx": "xlsx",
  ".parquet": "parquet",
};

export const supportedExtensions = Object.keys(formatsByExtension);

/** The format of a data file from its extension, or a CsvInputError listing the extensions read. */
export function formatFromPath(file: string): DataFormat {
  const extension = extname(file).toLowerCase();
  const format = formatsByExtension[extension];
  if (format) return format;
  const hint =
    extension === ".xls"
      ? "this is the old Excel format: save it as .xlsx (Excel: File > Save As > Excel Workbook)"
      : `the format is taken from the extension, and ${extension ? `"${extension}"` : "a file without one"} is not one that is read`;
  throw new CsvInputError({
    file,
    problem: `${hint}; --file reads ${supportedExtensions.join(", ")} (or give a CSV of any name with --csv)`,
  });
}

/** How a program in the sandbox reads the file at `path` directly. */
export function howToRead(format: DataFormat, path: string): string {
  const quoted = JSON.stringify(path);
  switch (format) {
    case "csv":
      return `pandas.read_csv(${quoted}) or the csv module`;
    case "tsv":
      return `pandas.read_csv(${quoted}, sep="\\t") or csv.reader(file, delimiter="\\t")`;
    case "json":
      return `json.load(open(${quoted})) (a list of records) or pandas.read_json(${quoted})`;
    case "jsonl":
      return `pandas.read_json(${quoted}, lines=True), or json.loads() per line`;
    case "xlsx":
      return `pandas.read_excel(${quoted}) (openpyxl, in the data image)`;
    case "parquet":
      // No parquet reader in the image (Debian 12 packages neither pyarrow nor fastparquet): the host
      // converts the file to CSV before it goes in.
      return `pandas.read_csv(${quoted}) (converted from parquet to CSV on the host; the sandbox has no parquet reader)`;
  }
}

/** Files read whole into memory (JSON arrays, xlsx) are refused above this size, with the way out. */
export const maxWholeFileBytes = 256 * 1024 * 1024;

export type SourceReadOptions = {
  /** The JSON Lines columns from an earlier scan: saves the pass over the file that collects them. */
  keys?: string[];
  /**
   * A typing sample's size. JSON Lines: without `keys`, the columns are the keys of the lines up
   * to this byte. Parquet: the rows stop once their text reaches this many characters.
   */
  sampleBytes?: number;
  /** Parquet: the first row to read, found through the metadata (other formats read from the start). */
  rowStart?: number;
};

/**
 * The records of a JSON, JSON Lines, xlsx or parquet file as text cells, the header first, so that
 * every format shares the CSV path's column typing.
 */
export async function* readSourceRecords(
  file: string,
  format: Exclude<DataFormat, "csv" | "tsv">,
  options: SourceReadOptions = {},
): AsyncGenerator<SourceRecord> {
  const { keys, sampleBytes, rowStart } = options;
  switch (format) {
    case "json":
      yield* keyedRecords(file, await readJsonArray(file));
      return;
    case "jsonl":
      yield* jsonLinesRecords(file, keys ?? (await jsonLinesKeys(file, sampleBytes)));
      return;
    case "xlsx":
      yield* excelRecords(file);
      return;
    case "parquet": {
      const { parquetRecords } = await import("./parquet-records.ts");
      yield* parquetRecords(file, { rowStart, sampleBytes });
      return;
    }
  }
}

async function readWhole(file: string, what: string): Promise<Buffer> {
  const { size } = await stat(file);
  if (size > maxWholeFileBytes) {
    throw new CsvInputError({
      file,
      problem: `${what} files are read whole and this one is ${(size / 1024 ** 2).toFixed(0)} MiB, over ${maxWholeFileBytes / 1024 ** 2} MiB; save it as JSON Lines, CSV or parquet, which are streamed`,
    });
  }
  return readFile(file);
}

async function readJsonArray(file: string): Promise<unknown[]> {
  let value: unknown;
  try {
    value = JSON.parse((await readWhole(file, "JSON")).toString("utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    if (CsvInputError.isInstance(error)) throw error;
    throw new CsvInputError({ file, problem: `not valid JSON: ${(error as Error).message}`, cause: error });
  }
  if (!Array.isArray(value)) {
    throw new CsvInputError({
      file,
      problem: `a JSON data file must be an array of records ([{"column": value, ...}, ...]), and this one is ${value === null ? "null" : typeof value === "object" ? "an object" : `a ${typeof value}`}; for one record per line, name it .jsonl`,
    });
  }
  return value;
}

function recordOf(file: string, value: unknown, line: number): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CsvInputError({
      file,
      line,
      problem: `every row must be a JSON object of column: value, and this one is ${Array.isArray(value) ? "an array" : JSON.stringify(value)?.slice(0, 40)}`,
    });
  }
  return value as Record<string, unknown>;
}

function* keyedRecords(file: string, rows: unknown[]): Generator<SourceRecord> {
  const keys = new Set<string>();
  rows.forEach((row, index) => {
    for (const key of Object.keys(recordOf(file, row, index + 1))) keys.add(key);
  });
  const header = [...keys];
  yield { record: header, line: 0 };
  for (const [index, row] of rows.entries()) {
    const values = row as Record<string, unknown>;
    yield { record: header.map((key) => cellText(values[key])), line: index + 1 };
  }
}

/**
 * The non-blank lines of a JSON Lines file, each parsed, with the byte offset just after it (lines
 * end at "\n", an "\r" before it is dropped). One line in memory at a time.
 */
async function* jsonLines(
  file: string,
): AsyncGenerator<{ value: unknown; line: number; bytesRead: number; endByte: number }> {
  const source = createReadStream(file);
  let line = 0;
  try {
    for await (const { text, endByte } of fileLines(source)) {
      line += 1;
      if (text.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line === 1 ? text.replace(/^\uFEFF/, "") : text);
      } catch (error) {
        throw new CsvInputError({
          file,
          line,
          problem: `not valid JSON: ${(error as Error).message}`,
          cause: error,
        });
      }
      yield { value: recordOf(file, value, line), line, bytesRead: source.bytesRead, endByte };
    }
  } finally {
    source.destroy();
  }
}

/** The lines of a stream as text, each with the byte offset just after its line break. */
async function* fileLines(source: AsyncIterable<Buffer>): AsyncGenerator<{ text: string; endByte: number }> {
  /** The start of a line that began in an earlier chunk. */
  let pending: Buffer[] = [];
  let chunkStart = 0;
  for await (const chunk of source) {
    let from = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, from)) {
      const bytes =
        pending.length > 0
          ? Buffer.concat([...pending, chunk.subarray(from, end)])
          : chunk.subarray(from, end);
      pending = [];
      yield { text: lineText(bytes), endByte: chunkStart + end + 1 };
      from = end + 1;
    }
    if (from < chunk.length) pending.push(chunk.subarray(from));
    chunkStart += chunk.length;
  }
  if (pending.length > 0) yield { text: lineText(Buffer.concat(pending)), endByte: chunkStart };
}

function lineText(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/**
 * Every key of a JSON Lines file, in the order first seen (one pass, one line in memory at a time);
 * with `untilByte`, of the lines up to the first one that ends at or past it (a typing sample's).
 */
async function jsonLinesKeys(file: string, untilByte?: number): Promise<string[]> {
  const keys = new Set<string>();
  for await (const { value, endByte } of jsonLines(file)) {
    for (const key of Object.keys(value as object)) keys.add(key);
    if (untilByte !== undefined && endByte >= untilByte) break;
  }
  return [...keys];
}

async function* jsonLinesRecords(file: string, keys: string[]): AsyncGenerator<SourceRecord> {
  yield { record: keys, line: 0 };
  for await (const { value, line, bytesRead, endByte } of jsonLines(file)) {
    const values = value as Record<string, unknown>;
    yield { record: keys.map((key) => cellText(values[key])), line, bytesRead, endByte };
  }
}

async function* excelRecords(file: string): AsyncGenerator<SourceRecord> {
  const { readSheet } = await import("read-excel-file/node");
  let rows: unknown[][];
  try {
    const bytes = await readWhole(file, "Excel");
    // Bounded before the reader unpacks its entries into memory (unpack-limits.ts).
    checkZipUnpackedSize(file, bytes);
    rows = (await readSheet(bytes)) as unknown[][];
  } catch (error) {
    if (CsvInputError.isInstance(error)) throw error;
    throw new CsvInputError({
      file,
      problem: `not a readable .xlsx workbook (${(error as Error).message}); save it from Excel as "Excel Workbook (.xlsx)"`,
      cause: error,
    });
  }
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
  checkSheetCells(file, rows.length, width);
  for (const [index, row] of rows.entries()) {
    const cells = Array.from({ length: width }, (_, column) => cellText(row[column]));
    if (index > 0 && cells.every((cell) => cell === "")) continue;
    yield { record: cells, line: index + 1 };
  }
}
