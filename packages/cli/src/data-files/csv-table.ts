// One scan of a data file: its columns typed (from every cell, or from a sample of a big file, the
// rest counted), what describes it to a model without keeping its rows. Its records come from
// table-records.ts, its columns from column-scan.ts; row-reader.ts reads its rows afterwards.
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { ColumnScan, type CsvColumn, headerNames } from "./column-scan.ts";
import type { DataFormat } from "./data-formats.ts";
import { NotPlainError, plainHead } from "./plain-head.ts";
import { type Delimiter, sniffDelimiter } from "./sniff-delimiter.ts";
import type { SourceRecord } from "./source-record.ts";
import { readRecords } from "./table-records.ts";

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

const sampleBytes = 64 * 1024;
/** What a scan reports as it goes: rows read so far, and bytes of the file where the format streams them. */
export type ScanProgress = { rows: number; bytesRead?: number; totalBytes: number };

export type ScanOptions = {
  /** The file's format (default "csv", its delimiter sniffed). */
  format?: DataFormat;
  /** Called every 10,000 rows and at the end. */
  onProgress?: (progress: ScanProgress) => void;
  /** Bytes of a CSV, TSV or JSON Lines file (of a parquet file's text) typed before the rest is only counted (default typingSampleBytes). */
  sampleBytes?: number;
  /**
   * How the rows past a CSV, TSV or JSON Lines file's typing sample are found: "counted" by line
   * breaks (the default: one pass over the rest of the file), or "estimated" from the sample's bytes
   * per row, reading nothing past the sample (the CLI's scans: the prompt then waits for the head
   * of a file only, whatever its size; the count says "about").
   */
  rowCount?: "counted" | "estimated";
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
  const reading = {
    file,
    format,
    delimiter,
    sizeBytes,
    sampleBytes,
    sampled,
    onProgress: options.onProgress,
  };
  const { scan, keys, sampleEnd, headerEnd, totalRows } = await typeRecords(reading);
  if (!scan || scan.header.length === 0) throw emptyFile(file);
  const rest =
    options.rowCount === "estimated" ? { estimate: { headerEnd, sizeBytes } } : { countFrom: file };
  const typingSample = await endSample(scan, { format, sampleEnd, totalRows, ...rest });
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

type Reading = {
  file: string;
  format: DataFormat;
  delimiter: Delimiter;
  sizeBytes: number;
  sampleBytes: number;
  sampled: boolean;
  onProgress: ScanOptions["onProgress"];
};

/** What typing a file's records found: its columns so far, its header, and where its sample ended. */
type Typed = {
  scan: ColumnScan | undefined;
  keys: string[];
  sampleEnd: number | undefined;
  headerEnd: number;
  totalRows: number | undefined;
};

/**
 * The file's records typed: a CSV or TSV head without quotes split by hand (plain-head.ts), any
 * other through its reader (csv-parse for CSV and TSV). A plain head with a ragged row is read
 * again by csv-parse, which names the row.
 */
async function typeRecords(reading: Reading): Promise<Typed> {
  const { file, format, delimiter, sampleBytes } = reading;
  const plain =
    format === "csv" || format === "tsv"
      ? await plainHead(file, { delimiter, sampleBytes: reading.sampled ? sampleBytes : reading.sizeBytes })
      : undefined;
  if (plain) {
    try {
      return await typeFrom(plain, reading);
    } catch (error) {
      if (!(error instanceof NotPlainError)) throw error;
    }
  }
  return typeFrom(readRecords({ file, format, delimiter }, reading.sampled ? { sampleBytes } : {}), reading);
}

async function typeFrom(
  records: Iterable<SourceRecord> | AsyncIterable<SourceRecord>,
  reading: Reading,
): Promise<Typed> {
  const { sampled, sampleBytes, sizeBytes, onProgress } = reading;
  const typed: Typed = {
    scan: undefined,
    keys: [],
    sampleEnd: undefined,
    headerEnd: 0,
    totalRows: undefined,
  };
  for await (const { record, bytesRead, endByte, ...header } of records) {
    const scan = typed.scan;
    if (!scan) {
      typed.keys = record;
      typed.scan = new ColumnScan(headerNames(record, reading.file), header.declaredTypes);
      typed.totalRows = header.totalRows;
      typed.headerEnd = endByte ?? 0;
      continue;
    }
    scan.add(record);
    if (scan.rowCount % 10_000 === 0)
      onProgress?.({ rows: scan.rowCount, totalBytes: sizeBytes, ...(bytesRead ? { bytesRead } : {}) });
    if (sampled && endByte !== undefined && endByte >= sampleBytes && endByte < sizeBytes) {
      typed.sampleEnd = endByte;
      break;
    }
  }
  return typed;
}

/**
 * The typing sample a scan stopped at, if it stopped before the end: the scan's row count becomes
 * the file's (counted by lines after `sampleEnd` in `countFrom`, or estimated from the sample's
 * bytes per row, or a parquet file's `totalRows`) and its text size the sample's text per row
 * times the rows.
 */
async function endSample(
  scan: ColumnScan,
  stop: {
    format: DataFormat;
    sampleEnd: number | undefined;
    totalRows: number | undefined;
  } & ({ countFrom: string } | { estimate: { headerEnd: number; sizeBytes: number } }),
): Promise<TypingSample | undefined> {
  let sample: TypingSample | undefined;
  if (stop.sampleEnd !== undefined) {
    // A JSON string holds a line break only escaped: a JSON Lines file's count is exact.
    const estimated = "estimate" in stop || (stop.format !== "jsonl" && scan.sawLineBreak);
    sample = { rows: scan.rowCount, bytes: stop.sampleEnd, rowCountEstimated: estimated };
    scan.rowCount +=
      "estimate" in stop
        ? estimatedRows(scan.rowCount, { ...stop.estimate, sampleEnd: stop.sampleEnd })
        : await countLines(stop.countFrom, stop.sampleEnd);
  } else if (stop.totalRows !== undefined && scan.rowCount < stop.totalRows) {
    sample = { rows: scan.rowCount, bytes: scan.textBytes, rowCountEstimated: false };
    scan.rowCount = stop.totalRows;
  }
  if (sample && sample.rows > 0) scan.textBytes = Math.round((scan.textBytes / sample.rows) * scan.rowCount);
  return sample;
}

/** The rows after a typing sample of `rows` rows, at the sample's bytes per row (the header's aside). */
function estimatedRows(
  rows: number,
  sample: { headerEnd: number; sampleEnd: number; sizeBytes: number },
): number {
  const bytesPerRow = (sample.sampleEnd - sample.headerEnd) / Math.max(1, rows);
  return Math.round((sample.sizeBytes - sample.sampleEnd) / Math.max(1, bytesPerRow));
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
