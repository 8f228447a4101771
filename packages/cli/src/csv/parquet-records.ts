import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { cellText } from "./cell-text.ts";
import type { SourceRecord } from "./data-formats.ts";

/**
 * The rows of a parquet file (hyparquet, with every codec of hyparquet-compressors), read one row
 * group at a time so memory follows the largest row group, not the file. Top-level columns only:
 * a nested column comes as its JSON text.
 */
export async function* parquetRecords(file: string): AsyncGenerator<SourceRecord> {
  const { buffer, metadata } = await openParquet(file);
  const header = parquetSchema(metadata).children.map((child) => child.element.name);
  yield { record: header, line: 0 };
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file: buffer, metadata, rowStart, rowEnd, compressors });
    } catch (error) {
      throw new CsvInputError({
        file,
        line: rowStart + 1,
        problem: `a parquet row group could not be read: ${(error as Error).message}`,
        cause: error,
      });
    }
    for (const [index, row] of rows.entries()) {
      yield { record: header.map((name) => cellText(row[name])), line: rowStart + index + 1 };
    }
    rowStart = rowEnd;
  }
}

async function openParquet(file: string) {
  try {
    const buffer = await asyncBufferFromFile(file);
    return { buffer, metadata: await parquetMetadataAsync(buffer) };
  } catch (error) {
    throw new CsvInputError({
      file,
      problem: `not a readable parquet file (${(error as Error).message})`,
      cause: error,
    });
  }
}
