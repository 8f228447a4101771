import {
  asyncBufferFromFile,
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type SchemaElement,
} from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { cellText } from "./cell-text.ts";
import type { ColumnType } from "./column-types.ts";
import type { SourceRecord } from "./data-formats.ts";

/**
 * The rows of a parquet file (hyparquet, with every codec of hyparquet-compressors), read one row
 * group at a time so memory follows the largest row group, not the file. Top-level columns only:
 * a nested column comes as its JSON text. The header carries each column's type from the schema,
 * and a whole number of a FLOAT, DOUBLE or DECIMAL column is written "29.0", as a CSV would, so
 * the column stays a float in the typing and in the CSV conversion pandas reads.
 */
export async function* parquetRecords(file: string): AsyncGenerator<SourceRecord> {
  const { buffer, metadata } = await openParquet(file);
  const elements = parquetSchema(metadata).children.map((child) => child.element);
  const header = elements.map((element) => element.name);
  const declaredTypes = parquetColumnTypes(elements);
  const floats = declaredTypes.map((type) => type === "float");
  yield { record: header, line: 0, declaredTypes };
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
      const record = header.map((name, column) => {
        const text = cellText(row[name]);
        return floats[column] && /^-?\d+$/.test(text) ? `${text}.0` : text;
      });
      yield { record, line: rowStart + index + 1 };
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
