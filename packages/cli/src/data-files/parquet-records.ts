import { stat } from "node:fs/promises";
import {
  type AsyncBuffer,
  asyncBufferFromFile,
  cachedAsyncBuffer,
  type FileMetaData,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type SchemaElement,
} from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { cellText } from "./cell-text.ts";
import type { ColumnType } from "./column-types.ts";
import type { SourceRecord } from "./source-record.ts";

export type ParquetReadOptions = {
  /** The first row to read (0-based): reading starts in the row group that holds it. */
  rowStart?: number;
  /**
   * Stop after the first rows whose cells reach this many characters of text (a typing sample),
   * read in batches sized to it rather than whole row groups. Unset: every row from `rowStart` on.
   */
  sampleBytes?: number;
};

/** A parquet file opened once: its metadata (read from the footer), its header and its types. */
type ParquetSource = {
  buffer: AsyncBuffer;
  metadata: FileMetaData;
  header: string[];
  declaredTypes: ColumnType[];
  /** True when a column is nested: hyparquet then decodes its whole chunk for any slice of a row group. */
  nested: boolean;
};

/** Rows of a typing sample's first batch, before the text size of a row is known. */
const firstSampleRows = 1_000;
/**
 * The most rows a batch decodes at once (a typing sample's later batch, and every batch of a full
 * read): a row group may hold millions of rows that one dictionary value makes long.
 */
const maxBatchRows = 65_536;

/**
 * The rows of a parquet file (hyparquet, with every codec of hyparquet-compressors), one row group
 * at a time from the one that holds `rowStart` (a typing sample in smaller batches), so memory
 * follows the largest row group, not the file. Top-level columns only: a nested column comes as its JSON text. The header carries
 * each column's type from the schema and the file's row count from its metadata; a whole number
 * of a FLOAT, DOUBLE or DECIMAL column is written "29.0", as a CSV would, so the column stays a
 * float in the typing and in the CSV conversion pandas reads.
 */
export async function* parquetRecords(
  file: string,
  options: ParquetReadOptions = {},
): AsyncGenerator<SourceRecord> {
  const source = await parquetSource(file);
  const { header, declaredTypes, metadata } = source;
  const floats = declaredTypes.map((type) => type === "float");
  yield { record: header, line: 0, declaredTypes, totalRows: Number(metadata.num_rows) };
  const sample =
    options.sampleBytes === undefined ? undefined : { limit: options.sampleBytes, bytes: 0, rows: 0 };
  for (const group of rowGroups(metadata, options.rowStart ?? 0)) {
    // Within a row group every batch reads the same column chunks: read them from the file once.
    const buffer = cachedAsyncBuffer(source.buffer);
    for (let rowStart = group.start; rowStart < group.end; ) {
      const rowEnd = source.nested ? group.end : Math.min(group.end, rowStart + nextBatchRows(sample, group));
      const rows = await readBatch(file, { buffer, metadata, rowStart, rowEnd });
      for (const [index, row] of rows.entries()) {
        const record = header.map((name, column) => {
          const text = cellText(row[name]);
          return floats[column] && /^-?\d+$/.test(text) ? `${text}.0` : text;
        });
        yield { record, line: rowStart + index + 1 };
        if (sample) {
          sample.rows += 1;
          sample.bytes += record.reduce((total, cell) => total + cell.length, record.length);
          if (sample.bytes >= sample.limit) return;
        }
      }
      rowStart = rowEnd;
    }
  }
}

/** The row groups that hold rows from `rowStart` on, each from its first row wanted. */
function* rowGroups(metadata: FileMetaData, rowStart: number) {
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const groupEnd = groupStart + Number(group.num_rows);
    if (groupEnd > rowStart) yield { start: Math.max(groupStart, rowStart), end: groupEnd, metadata: group };
    groupStart = groupEnd;
  }
}

/**
 * A batch's size: at most `maxBatchRows`, and in a typing sample about the rows that reach its text
 * size. hyparquet decodes a whole data page for any slice of it, so a page of a million dictionary
 * indices is decoded again for each batch (cheap: the indices, not the values); the rows decoded
 * at once stay bounded whatever a row group holds.
 */
function nextBatchRows(
  sample: { limit: number; bytes: number; rows: number } | undefined,
  group: { metadata: FileMetaData["row_groups"][number] },
): number {
  if (!sample) return maxBatchRows;
  if (sample.rows === 0) {
    // The decoded size is no guide to the text (a dictionary-encoded value takes a few bits): start small.
    const decodedBytesPerRow =
      Number(group.metadata.total_byte_size) / Math.max(1, Number(group.metadata.num_rows));
    return Math.max(1, Math.min(firstSampleRows, Math.ceil(sample.limit / Math.max(1, decodedBytesPerRow))));
  }
  const textBytesPerRow = Math.max(1, sample.bytes / sample.rows);
  return Math.min(
    maxBatchRows,
    Math.max(1, Math.ceil(((sample.limit - sample.bytes) / textBytesPerRow) * 1.1)),
  );
}

async function readBatch(
  file: string,
  batch: { buffer: AsyncBuffer; metadata: FileMetaData; rowStart: number; rowEnd: number },
): Promise<Record<string, unknown>[]> {
  const { buffer, metadata, rowStart, rowEnd } = batch;
  try {
    return await parquetReadObjects({ file: buffer, metadata, rowStart, rowEnd, compressors });
  } catch (error) {
    throw new CsvInputError({
      file,
      line: rowStart + 1,
      problem: `a parquet row group could not be read: ${(error as Error).message}`,
      cause: error,
    });
  }
}

/** Opened files by path, inode, size and times: paging reads a file's metadata once, a changed file anew. */
const openSources = new Map<string, Promise<ParquetSource>>();
const maxOpenSources = 8;

async function parquetSource(file: string): Promise<ParquetSource> {
  const info = await stat(file).catch((error: unknown) => {
    throw new CsvInputError({ file, problem: `cannot read it: ${(error as Error).message}`, cause: error });
  });
  const key = [file, info.ino, info.size, info.mtimeMs, info.ctimeMs].join("\u0000");
  let source = openSources.get(key);
  if (!source) {
    source = openParquet(file);
    openSources.set(key, source);
    source.catch(() => openSources.delete(key));
    if (openSources.size > maxOpenSources) openSources.delete(openSources.keys().next().value as string);
  }
  return source;
}

async function openParquet(file: string): Promise<ParquetSource> {
  let buffer: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    buffer = await asyncBufferFromFile(file);
    metadata = await parquetMetadataAsync(buffer);
  } catch (error) {
    throw new CsvInputError({
      file,
      problem: `not a readable parquet file (${(error as Error).message})`,
      cause: error,
    });
  }
  const elements = parquetSchema(metadata).children.map((child) => child.element);
  return {
    buffer,
    metadata,
    header: elements.map((element) => element.name),
    declaredTypes: parquetColumnTypes(elements),
    nested: elements.some((element) => (element.num_children ?? 0) > 0),
  };
}

/**
 * The type a parquet column declares, in the CSV typing's terms: BOOLEAN bool; INT32 and INT64
 * int; FLOAT, DOUBLE and DECIMAL float; dates, times, timestamps (INT96 too), strings, binary and
 * nested columns str (they arrive as ISO or JSON text).
 */
export function parquetColumnTypes(elements: SchemaElement[]): ColumnType[] {
  return elements.map((element): ColumnType => {
    const logical = element.logical_type?.type;
    const converted = element.converted_type;
    if ((element.num_children ?? 0) > 0) return "str";
    if (logical === "DECIMAL" || converted === "DECIMAL" || logical === "FLOAT16") return "float";
    if (logical !== undefined && logical !== "INTEGER") return "str";
    if (converted !== undefined && !/^U?INT_/.test(converted)) return "str";
    switch (element.type) {
      case "BOOLEAN":
        return "bool";
      case "INT32":
      case "INT64":
        return "int";
      case "FLOAT":
      case "DOUBLE":
        return "float";
      default:
        return "str";
    }
  });
}
