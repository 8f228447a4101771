import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { pythonTypeName } from "./column-types.ts";
import { type CsvColumn, type CsvRow, type CsvTable, readRows } from "./csv-table.ts";

/** CSV text one call may return before the tool asks for pages (the rows go through the bridge as JSON). */
export const maxBytesPerCall = 16 * 1024 * 1024;

/** How many rows one call may return: every row for a file up to maxBytesPerCall, else a page. */
export function rowsPerCall(table: CsvTable): number {
  if (table.sizeBytes <= maxBytesPerCall || table.rowCount === 0) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.floor((table.rowCount * maxBytesPerCall) / table.sizeBytes));
}

function describeColumn(column: CsvColumn): string {
  let text = `${column.name} (${pythonTypeName(column.type)}`;
  if (column.isoDates) text += ", an ISO date YYYY-MM-DD";
  if (column.categories)
    text += `, one of ${column.categories.map((value) => JSON.stringify(value)).join(", ")}`;
  if (column.hasEmpty && column.type !== "empty") text += ", or None when blank";
  return `${text})`;
}

/**
 * What the model sees of a CSV: the only thing it knows of the file. Names every column with its
 * type and the row count.
 */
export function describeTable(table: CsvTable): string {
  const fileName = table.file.split(/[\\/]/).pop() ?? table.file;
  const rowText = `${table.rowCount.toLocaleString("en-US")} row${table.rowCount === 1 ? "" : "s"}`;
  const lines = [
    `Return the rows of ${fileName} (${rowText}) as a list of dicts, one per row, with typed values: ${table.columns.map(describeColumn).join(", ")}.`,
  ];
  const pageSize = rowsPerCall(table);
  if (Number.isFinite(pageSize)) {
    lines.push(
      `The file is large: one call returns at most ${pageSize.toLocaleString("en-US")} rows, so read it in pages with offset= and limit=.`,
    );
  } else {
    lines.push("With no arguments it returns every row; offset= and limit= return a slice.");
  }
  return lines.join(" ");
}

/** The Python function name for a table: `load_orders` for orders.csv. */
export function loaderName(table: CsvTable): string {
  return `load_${table.name}`;
}

/**
 * A CSV as a LangChain tool `load_<name>(offset=0, limit=None)` returning typed rows. The file is
 * read again, as a stream, at each call: nothing of it is held between calls.
 */
export function csvTool(table: CsvTable, options: { name?: string } = {}) {
  const pageSize = rowsPerCall(table);
  const schema = z.object({
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
  return tool(
    async (args: { offset?: number; limit?: number }): Promise<CsvRow[]> => {
      const offset = args.offset ?? 0;
      const remaining = Math.max(0, table.rowCount - offset);
      const limit = args.limit ?? remaining;
      if (limit > pageSize && remaining > pageSize) {
        throw new Error(
          `${loaderName(table)} would return ${Math.min(limit, remaining)} rows, more than the ${pageSize} one call may return; pass limit=${pageSize} and step offset= by it`,
        );
      }
      return readRows(table, { offset, limit });
    },
    { name: options.name ?? loaderName(table), description: describeTable(table), schema },
  );
}
