// What a data file may expand to on the host before anything parses it (issue 45 #3): an .xlsx is a
// zip whose entries can unpack a thousand times over, and a parquet file's dictionary pages can
// repeat one long value for millions of rows. Each limit is checked before the expansion it bounds
// (the zip's entries while they are inflated, counted as they stream and never kept).
import { Unzip, UnzipInflate } from "fflate";
import { CsvInputError } from "../errors/csv-input-error.ts";

/** The most one entry of an .xlsx (a sheet, the shared strings) may unpack to. */
export const maxEntryUnpackedBytes = 64 * 1024 * 1024;
/** The most all the entries of an .xlsx together may unpack to. */
export const maxTotalUnpackedBytes = 128 * 1024 * 1024;
/** The most cells (rows x columns) a table read whole (an .xlsx sheet) may be expanded to. */
export const maxSheetCells = 10_000_000;
/** The most CSV text a parquet file may be converted to for the sandbox (its workspace holds 1 GiB). */
export const maxConvertedBytes = 512 * 1024 * 1024;

const mebibytes = (bytes: number) => `${Math.round(bytes / 1024 ** 2)} MiB`;
const streamedFormats = "save it as CSV or parquet, which are read as a stream";
/** Compressed bytes pushed at a time: deflate expands at most about 1,032:1, so an output chunk stays near 1 MiB. */
const pushBytes = 1024;

/**
 * Inflates every entry of the zip in `bytes` (an .xlsx), counting what each unpacks to and
 * discarding it, and throws a CsvInputError once an entry passes `maxEntryUnpackedBytes` or all of
 * them `maxTotalUnpackedBytes`: at most about 1 MiB of output is held at any time, whatever the
 * entries declare. Run before a reader that unpacks the entries into memory.
 */
export function checkZipUnpackedSize(file: string, bytes: Uint8Array): void {
  let total = 0;
  let refusal: CsvInputError | undefined;
  const unzip = new Unzip();
  unzip.register(UnzipInflate);
  unzip.onfile = (entry) => {
    let entryBytes = 0;
    entry.ondata = (error, chunk) => {
      if (refusal) return;
      if (error) {
        refusal = notAZip(file, error);
        return;
      }
      entryBytes += chunk.length;
      total += chunk.length;
      if (entryBytes > maxEntryUnpackedBytes) {
        refusal = overUnpacked(
          file,
          `its entry ${entry.name} unpacks to more than ${mebibytes(maxEntryUnpackedBytes)}, the most one entry may`,
        );
      } else if (total > maxTotalUnpackedBytes) {
        refusal = overUnpacked(
          file,
          `its entries unpack to more than ${mebibytes(maxTotalUnpackedBytes)} together, the most a workbook may`,
        );
      }
      if (refusal) entry.terminate();
    };
    entry.start();
  };
  try {
    for (let offset = 0; offset < bytes.length && !refusal; offset += pushBytes) {
      const end = Math.min(bytes.length, offset + pushBytes);
      unzip.push(bytes.subarray(offset, end), end === bytes.length);
    }
  } catch (error) {
    refusal ??= notAZip(file, error);
  }
  if (refusal) throw refusal;
}

function overUnpacked(file: string, what: string): CsvInputError {
  return new CsvInputError({
    file,
    problem: `this .xlsx is refused before it is read: ${what} (a compressed workbook can expand a thousand times over); ${streamedFormats}, or split the workbook`,
  });
}

function notAZip(file: string, error: unknown): CsvInputError {
  return new CsvInputError({
    file,
    problem: `not a readable .xlsx workbook (its zip could not be unpacked: ${error instanceof Error ? error.message : String(error)}); save it from Excel as "Excel Workbook (.xlsx)"`,
    cause: error,
  });
}

/** Throws a CsvInputError when a sheet of `rows` rows of `width` cells is over `maxSheetCells`. */
export function checkSheetCells(file: string, rows: number, width: number): void {
  if (rows * width <= maxSheetCells) return;
  throw new CsvInputError({
    file,
    problem: `the sheet is ${rows.toLocaleString("en")} rows by ${width.toLocaleString("en")} columns, over the ${maxSheetCells.toLocaleString("en")} cells a workbook may have; ${streamedFormats}`,
  });
}

/**
 * Throws a CsvInputError when a parquet file's CSV conversion would pass `maxConvertedBytes`:
 * its row count (from the metadata) times the text of a row in its typing sample.
 */
export function checkConversionSize(file: string, table: { rowCount: number; textBytes: number }): void {
  if (table.textBytes <= maxConvertedBytes) return;
  throw conversionTooLarge(
    file,
    `about ${mebibytes(table.textBytes)} (${table.rowCount.toLocaleString("en")} rows)`,
  );
}

/** The error of a conversion that passed `maxConvertedBytes` while it was written. */
export function conversionTooLarge(file: string, size: string): CsvInputError {
  return new CsvInputError({
    file,
    problem: `as CSV for the sandbox this parquet file takes ${size}, and a conversion may take at most ${mebibytes(maxConvertedBytes)} (a small parquet file can repeat one value for millions of rows); select the rows or columns needed into a smaller file`,
  });
}
