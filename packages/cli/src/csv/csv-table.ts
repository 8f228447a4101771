import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { CsvError, parse } from "csv-parse";
import { CsvInputError } from "../errors/csv-input-error.ts";
import {
  type CellValue,
  type ColumnType,
  classifyCell,
  convertCell,
  convertSampledCell,
  widenType,
} from "./column-types.ts";
import {
  type DataFormat,
  readSourceRecords,
  type SourceReadOptions,
  type SourceRecord,
} from "./data-formats.ts";
import { type Delimiter, sniffDelimiter } from "./sniff-delimiter.ts";

export type CsvColumn = {
  name: string;
  type: ColumnType;
  /** Every distinct value of a str column when there are few of them (a category), else undefined. */
  categories?: string[];
  /** True when every value of a str column is an ISO date (YYYY-MM-DD). */
  isoDates?: boolean;
  /** True when at least one cell is blank (null in the rows). */
  hasEmpty: boolean;
};

/** What one scan of a CSV file found: enough to describe it to a model without keeping its rows. */
export type CsvTable = {
  /** The path as given. */
  file: string;
  /** The file name without its extension, as a Python identifier ("orders" for Orders.csv). */
  name: string;
  format: DataFormat;
  /** CSV and TSV only. */
  delimiter: Delimiter;
  columns: CsvColumn[];
  rowCount: number;
  sizeBytes: number;
  /** About how many bytes the rows take as CSV text (a parquet or xlsx file is compressed). */
  textBytes: number;
  /** The header as read, before blank or repeated names were made unique. */
  keys: string[];
  /**
   * Set when the file is bigger than the typing sample: columns were typed (and categories, dates
   * and blanks seen) from its first `rows` rows only, and the rest of the rows were counted by line
   * breaks (a parquet file: taken from its metadata), not parsed. Unset: every cell was read (a
   * file within the sample, or a whole-file format).
   */
  sample?: TypingSample;
};

export type TypingSample = {
  /** Rows typed. */
  rows: number;
  /** Bytes of the file those rows take (parquet: their cells' characters, the size of their text). */
  bytes: number;
  /** True when a typed cell held a line break: the count by lines is then an estimate (quoted line breaks). */
  rowCountEstimated: boolean;
};

/**
 * A CSV, TSV or JSON Lines file over this size is typed from its first rows up to this many bytes
 * (a JSON Lines file's columns are the keys of those rows); the rest is only counted. A parquet
 * file is typed from its first rows up to this much text, and its row count is its metadata's.
 * A full scan of a 45 MB file took 8 s at low load; the sample takes a tenth of it.
 */
export const typingSampleBytes = 4 * 1024 * 1024;

export type CsvRow = Record<string, CellValue>;

const sampleBytes = 64 * 1024;
const maxCategories = 12;
const maxCategoryLength = 40;
const isoDatePattern = /^\d{4}-\d{2}-\d{2}$/;

/** What a scan reports as it goes: rows read so far, and bytes of the file where the format streams them. */
export type ScanProgress = { rows: number; bytesRead?: number; totalBytes: number };

export type ScanOptions = {
  /** The file's format (default "csv", its delimiter sniffed). */
  format?: DataFormat;
  /** Called every 10,000 rows and at the end. */
  onProgress?: (progress: ScanProgress) => void;
  /** Bytes of a CSV, TSV or JSON Lines file (of a parquet file's text) typed before the rest is only counted (default typingSampleBytes). */
  sampleBytes?: number;
};

/**
 * Reads a data file once, as a stream where the format allows (a CSV of any size takes constant
 * memory), and infers each column's type from every cell, or, for a CSV, TSV or JSON Lines file
 * bigger than `sampleBytes`, from the cells of its first rows up to that size (the rest is counted
 * by line breaks, see CsvTable.sample); a parquet file's rows up to that much text (its metadata
 * holds the row count). Throws CsvInputError naming the file, and the line where there is
 * one, for a missing, empty, binary, ragged or malformed file (beyond a sample: when a page is read).
 */
export async function scanCsv(file: string, options: ScanOptions = {}): Promise<CsvTable> {
  const format = options.format ?? "csv";
  const { sizeBytes, sample } = await readSample(file);
  let delimiter: Delimiter = ",";
  if (format === "csv" || format === "tsv") {
    if (sample.replace(/^\uFEFF/, "").trim() === "") throw emptyFile(file);
    if (sample.includes("\u0000")) {
      throw new CsvInputError({ file, problem: "this is not a text CSV file (it contains NUL bytes)" });
    }
    delimiter = format === "tsv" ? "\t" : sniffDelimiter(sample);
  }
  const sampleBytes = options.sampleBytes ?? typingSampleBytes;
  // A file's bytes bound a CSV, TSV or JSON Lines sample; a parquet file's sample ends in its reader.
  const sampled =
    format === "parquet" || (sizeBytes > sampleBytes && ["csv", "tsv", "jsonl"].includes(format));
  let scan: ColumnScan | undefined;
  let keys: string[] = [];
  let sampleEnd: number | undefined;
  let totalRows: number | undefined;
  const records = readRecords({ file, format, delimiter }, sampled ? { sampleBytes } : {});
  for await (const { record, bytesRead, endByte, ...header } of records) {
    if (!scan) {
      keys = record;
      scan = new ColumnScan(headerNames(record, file), header.declaredTypes);
      totalRows = header.totalRows;
      continue;
    }
    scan.add(record);
    if (scan.rowCount % 10_000 === 0)
      options.onProgress?.({
        rows: scan.rowCount,
        totalBytes: sizeBytes,
        ...(bytesRead ? { bytesRead } : {}),
      });
    if (sampled && endByte !== undefined && endByte >= sampleBytes && endByte < sizeBytes) {
      sampleEnd = endByte;
      break;
    }
  }
  if (!scan || scan.header.length === 0) throw emptyFile(file);
  const typingSample = await endSample(scan, { file, format, sampleEnd, totalRows });
  options.onProgress?.({ rows: scan.rowCount, bytesRead: sizeBytes, totalBytes: sizeBytes });
  return {
    file,
    name: tableName(file),
    format,
    delimiter,
    columns: scan.columns(),
    rowCount: scan.rowCount,
    sizeBytes,
    textBytes: scan.textBytes,
    keys,
    ...(typingSample ? { sample: typingSample } : {}),
  };
}

/**
 * The typing sample a scan stopped at, if it stopped before the end: the scan's row count becomes
 * the file's (counted by lines after `sampleEnd`, or a parquet file's `totalRows`) and its text
 * size the sample's text per row times the rows.
 */
async function endSample(
  scan: ColumnScan,
  stop: { file: string; format: DataFormat; sampleEnd: number | undefined; totalRows: number | undefined },
): Promise<TypingSample | undefined> {
  let sample: TypingSample | undefined;
  if (stop.sampleEnd !== undefined) {
    // A JSON string holds a line break only escaped: a JSON Lines file's count is exact.
    const estimated = stop.format !== "jsonl" && scan.sawLineBreak;
    sample = { rows: scan.rowCount, bytes: stop.sampleEnd, rowCountEstimated: estimated };
    scan.rowCount += await countLines(stop.file, stop.sampleEnd);
  } else if (stop.totalRows !== undefined && scan.rowCount < stop.totalRows) {
    sample = { rows: scan.rowCount, bytes: scan.textBytes, rowCountEstimated: false };
    scan.rowCount = stop.totalRows;
  }
  if (sample && sample.rows > 0) scan.textBytes = Math.round((scan.textBytes / sample.rows) * scan.rowCount);
  return sample;
}

/**
 * The lines of a file from byte `start` on that hold more than a line ending (csv-parse skips the
 * blank ones): the rows there when no field holds a quoted line break. One streamed pass of
 * Buffer.indexOf, no parsing.
 */
export async function countLines(file: string, start: number): Promise<number> {
  let lines = 0;
  let lineBytes = 0;
  for await (const chunk of createReadStream(file, { start }) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let end = chunk.indexOf(10, from); end !== -1; end = chunk.indexOf(10, from)) {
      lineBytes += end - from;
      if (lineBytes > 1 || (lineBytes === 1 && chunk[end - 1] !== 13)) lines += 1;
      lineBytes = 0;
      from = end + 1;
    }
    lineBytes += chunk.length - from;
  }
  return lineBytes > 0 ? lines + 1 : lines;
}

function emptyFile(file: string): CsvInputError {
  return new CsvInputError({
    file,
    problem: "the file is empty; a data file needs a header row (or records) naming its columns",
  });
}

/** Every column's type, categories, dates and blanks, from one cell at a time. */
class ColumnScan {
  rowCount = 0;
  /** About how many bytes the rows take as CSV text. */
  textBytes = 0;
  private types: ColumnType[];
  private categories: (Set<string> | undefined)[];
  private isoDates: boolean[];
  private hasEmpty: boolean[];
  /** True once a cell held a line break (a quoted one: the record spans lines). */
  sawLineBreak = false;

  readonly header: string[];
  private declaredTypes: ColumnType[] | undefined;

  constructor(header: string[], declaredTypes?: ColumnType[]) {
    this.header = header;
    this.declaredTypes = declaredTypes;
    this.types = header.map(() => "empty");
    this.categories = header.map(() => new Set<string>());
    this.isoDates = header.map(() => true);
    this.hasEmpty = header.map(() => false);
  }

  add(record: string[]): void {
    this.rowCount += 1;
    this.textBytes += record.length;
    for (let index = 0; index < record.length; index += 1) {
      const cell = record[index]!;
      this.textBytes += cell.length;
      if (!this.sawLineBreak && cell.includes("\n")) this.sawLineBreak = true;
      const cellType = classifyCell(cell);
      if (cellType === "empty") {
        this.hasEmpty[index] = true;
        continue;
      }
      this.types[index] = widenType(this.types[index]!, cellType);
      const seen = this.categories[index];
      if (seen && cell.length <= maxCategoryLength) {
        seen.add(cell);
        if (seen.size > maxCategories) this.categories[index] = undefined;
      } else if (seen) {
        this.categories[index] = undefined;
      }
      if (this.isoDates[index] && !isoDatePattern.test(cell)) this.isoDates[index] = false;
    }
  }

  columns(): CsvColumn[] {
    return this.header.map((name, index): CsvColumn => {
      const type = withDeclaredType(this.types[index]!, this.declaredTypes?.[index]);
      const column: CsvColumn = { name, type, hasEmpty: this.hasEmpty[index]! };
      if (type === "str") {
        const values = this.categories[index];
        if (values && this.rowCount > values.size) column.categories = [...values].sort();
        if (this.isoDates[index]) column.isoDates = true;
      }
      return column;
    });
  }
}

/**
 * A column's type from its values, corrected by the type its file declares: a declared str stays
 * str (a string column of digits), a declared type fills a column with no values, and an int
 * column the schema declares float is float. A declared int column whose values read as float
 * holds an int64 beyond 2^53: it is str, exactly as written (a number would round it).
 */
function withDeclaredType(scanned: ColumnType, declared: ColumnType | undefined): ColumnType {
  if (declared === undefined) return scanned;
  if (declared === "str" || scanned === "empty") return declared;
  if (declared === "float" && scanned === "int") return "float";
  if (declared === "int" && scanned === "float") return "str";
  return scanned;
}

/**
 * The typed rows of a scanned table, `offset` rows skipped and at most `limit` returned, read as a
 * stream so only the rows returned are held in memory.
 */
export async function readRows(
  table: CsvTable,
  options: { offset?: number; limit?: number } = {},
): Promise<CsvRow[]> {
  const reader = openRowReader(table, { offset: options.offset ?? 0 });
  try {
    return await reader.read(options.limit ?? Number.POSITIVE_INFINITY);
  } finally {
    await reader.close();
  }
}

/** A position in a table's rows that reads on from where it stopped: paging costs one pass, not one per page. */
export type RowReader = {
  /** The index of the next row read returns. */
  readonly position: number;
  skip(count: number): Promise<void>;
  read(limit: number): Promise<CsvRow[]>;
  close(): Promise<void>;
};

/**
 * A reader at row `offset`: a parquet file's rows start at the row group that holds it (found
 * through its metadata); the other formats read their rows up to it.
 */
export function openRowReader(table: CsvTable, options: { offset?: number } = {}): RowReader {
  const offset = options.offset ?? 0;
  const rowStart = table.format === "parquet" ? offset : 0;
  const records = readRecords(table, { rowStart });
  let position = offset;
  let headerRead = false;
  const nextRecord = async (): Promise<string[] | undefined> => {
    if (!headerRead) {
      headerRead = true;
      if ((await records.next()).done) return undefined;
      for (let skipped = rowStart; skipped < offset; skipped += 1) {
        if ((await records.next()).done) return undefined;
      }
    }
    const item = await records.next();
    return item.done ? undefined : item.value.record;
  };
  return {
    get position() {
      return position;
    },
    async skip(count) {
      for (let skipped = 0; skipped < count; skipped += 1) {
        if ((await nextRecord()) === undefined) return;
        position += 1;
      }
    },
    async read(limit) {
      const rows: CsvRow[] = [];
      while (rows.length < limit) {
        const record = await nextRecord();
        if (record === undefined) break;
        const row: CsvRow = {};
        // Beyond a typing sample a cell may not fit its column's type: it then comes as its text.
        const convert = table.sample ? convertSampledCell : convertCell;
        table.columns.forEach((column, columnIndex) => {
          row[column.name] = convert(record[columnIndex] ?? "", column.type);
        });
        rows.push(row);
        position += 1;
      }
      return rows;
    },
    async close() {
      await records.return(undefined);
    },
  };
}

/**
 * The records of a data file as text cells, the header first, whatever its format (see
 * SourceReadOptions for `sampleBytes` and `rowStart`, which CSV and TSV ignore).
 */
export function readRecords(
  table: Pick<CsvTable, "file" | "format" | "delimiter"> & { keys?: string[] },
  options: Omit<SourceReadOptions, "keys"> = {},
) {
  const { file, format } = table;
  return format === "csv" || format === "tsv"
    ? parseRecords(file, table.delimiter)
    : readSourceRecords(file, format, { keys: table.keys, ...options });
}

async function* parseRecords(file: string, delimiter: Delimiter): AsyncGenerator<SourceRecord> {
  const source = createReadStream(file);
  const parser = source.pipe(parse({ delimiter, bom: true, skip_empty_lines: true, info: true }));
  try {
    for await (const item of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; bytes: number };
    }>) {
      yield {
        record: item.record,
        line: item.info.lines,
        bytesRead: source.bytesRead,
        endByte: item.info.bytes,
      };
    }
  } catch (error) {
    throw csvProblem(file, error);
  } finally {
    source.destroy();
    parser.destroy();
  }
}

async function readSample(file: string): Promise<{ sizeBytes: number; sample: string }> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw new CsvInputError({ file, problem: "this is a folder, not a CSV file" });
    handle = await open(file, "r");
    const buffer = Buffer.alloc(Math.min(sampleBytes, info.size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { sizeBytes: info.size, sample: buffer.subarray(0, bytesRead).toString("utf8") };
  } catch (error) {
    if (CsvInputError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new CsvInputError({ file, problem: "no such file", cause: error });
    if (code === "EACCES") throw new CsvInputError({ file, problem: "permission denied", cause: error });
    throw new CsvInputError({ file, problem: `cannot read it: ${(error as Error).message}`, cause: error });
  } finally {
    await handle?.close();
  }
}

function headerNames(record: string[], file: string): string[] {
  const taken = new Set<string>();
  return record.map((raw, index) => {
    let name = raw.trim() || `column_${index + 1}`;
    if (taken.has(name)) {
      let suffix = 2;
      while (taken.has(`${name}_${suffix}`)) suffix += 1;
      name = `${name}_${suffix}`;
    }
    taken.add(name);
    if (name.length > 200)
      throw new CsvInputError({ file, line: 1, problem: "a column name is over 200 characters" });
    return name;
  });
}

function csvProblem(file: string, error: unknown): CsvInputError {
  if (CsvInputError.isInstance(error)) return error;
  if (error instanceof CsvError) {
    const line = typeof error.lines === "number" ? error.lines : undefined;
    switch (error.code) {
      case "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH": {
        const match = /expect (\d+), got (\d+)/.exec(error.message);
        const counts = match
          ? `the row has ${match[2]} fields but the header has ${match[1]}`
          : "the row has a different number of fields from the header";
        return new CsvInputError({
          file,
          line,
          problem: `${counts}; every row needs one field per column (quote fields that contain the delimiter)`,
          cause: error,
        });
      }
      case "CSV_QUOTE_NOT_CLOSED":
        return new CsvInputError({
          file,
          line,
          problem: "a quoted field is never closed (a missing closing quote)",
          cause: error,
        });
      default:
        return new CsvInputError({ file, line, problem: `malformed CSV: ${error.message}`, cause: error });
    }
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new CsvInputError({ file, problem: "no such file", cause: error });
  return new CsvInputError({ file, problem: `cannot read it: ${(error as Error).message}`, cause: error });
}

/** "data/Q3 Orders.csv" -> "q3_orders". */
export function tableName(file: string): string {
  let name = basename(file, extname(file))
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (name === "") name = "csv";
  if (/^[0-9]/.test(name)) name = `table_${name}`;
  return name;
}
