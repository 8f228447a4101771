// The typed rows of a scanned table, read as a stream from any position.
import { type CellValue, convertCell, convertSampledCell } from "./column-types.ts";
import type { CsvTable } from "./csv-table.ts";
import { readRecords } from "./table-records.ts";

export type CsvRow = Record<string, CellValue>;

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
