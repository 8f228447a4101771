import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import writeExcelFile from "write-excel-file/node";
import { type TwinFormat, writeTwins } from "../../test/data-twins.ts";
import { cellText } from "./cell-text.ts";
import { type ScanProgress, scanCsv } from "./csv-table.ts";
import { formatFromPath } from "./data-formats.ts";
import { readRows } from "./row-reader.ts";
import { readRecords } from "./table-records.ts";

const orders = new URL("../../../../examples/data/orders.csv", import.meta.url).pathname;
let folder: string;
let twins: Record<TwinFormat, string>;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-formats-"));
  twins = await writeTwins(orders, folder);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function problem(path: string, text: string | Buffer): Promise<string> {
  await writeFile(path, text);
  return scanCsv(path, { format: formatFromPath(path) }).then(
    () => "no error",
    (error: Error) => error.message,
  );
}

describe("data files beyond CSV", () => {
  it.each(["tsv", "json", "jsonl", "xlsx", "parquet"] as const)(
    "a %s twin of orders.csv gives the same columns and the same typed rows",
    async (format) => {
      const csv = await scanCsv(orders);
      const progress: ScanProgress[] = [];
      const twin = await scanCsv(twins[format], {
        format: formatFromPath(twins[format]),
        onProgress: (counts) => progress.push(counts),
      });
      expect(twin.format).toBe(format);
      expect(twin.rowCount).toBe(500);
      expect(twin.columns.map((column) => column.name)).toEqual(csv.columns.map((column) => column.name));
      expect(twin.columns.find((column) => column.name === "date")?.isoDates).toBe(true);
      expect(await readRows(twin)).toEqual(await readRows(csv));
      // Paging reads from the middle of the file (the parquet twin is in row groups of 200).
      expect(await readRows(twin, { offset: 190, limit: 20 })).toEqual(
        await readRows(csv, { offset: 190, limit: 20 }),
      );
      expect(progress.at(-1)).toEqual({ rows: 500, bytesRead: twin.sizeBytes, totalBytes: twin.sizeBytes });
    },
  );

  it("takes the format from the extension, and names the way out for one it does not read", () => {
    expect(formatFromPath("a/Orders.XLSX")).toBe("xlsx");
    expect(formatFromPath("events.ndjson")).toBe("jsonl");
    expect(() => formatFromPath("old.xls")).toThrow(/old Excel format: save it as \.xlsx/);
    expect(() => formatFromPath("data.txt")).toThrow(
      /"\.txt" is not one that is read; --file reads \.csv, \.tsv, .*\.parquet \(or give a CSV of any name with --csv\)/,
    );
  });

  it("refuses malformed files with the file, the line and the fix", async () => {
    expect(await problem(join(folder, "object.json"), '{"rows": []}')).toMatch(
      /object\.json: a JSON data file must be an array of records .* this one is an object; for one record per line, name it \.jsonl/,
    );
    expect(await problem(join(folder, "broken.jsonl"), '{"a": 1}\n{"a": 2\n')).toMatch(
      /broken\.jsonl line 2: not valid JSON/,
    );
    expect(await problem(join(folder, "scalars.jsonl"), '{"a": 1}\n7\n')).toMatch(
      /scalars\.jsonl line 2: every row must be a JSON object of column: value, and this one is 7/,
    );
    expect(await problem(join(folder, "empty.jsonl"), "\n")).toMatch(/empty\.jsonl: the file is empty/);
    expect(await problem(join(folder, "fake.parquet"), "not parquet at all")).toMatch(
      /fake\.parquet: not a readable parquet file/,
    );
    expect(await problem(join(folder, "fake.xlsx"), Buffer.from("PK\u0003\u0004broken"))).toMatch(
      /fake\.xlsx: not a readable \.xlsx workbook/,
    );
  });

  it("reads records with different keys as the union of their keys, missing ones blank", async () => {
    const path = join(folder, "ragged.jsonl");
    await writeFile(path, '{"a": 1}\n{"b": "x", "a": 2}\n');
    const table = await scanCsv(path, { format: "jsonl" });
    expect(table.columns.map((column) => [column.name, column.type])).toEqual([
      ["a", "int"],
      ["b", "str"],
    ]);
    expect(await readRows(table)).toEqual([
      { a: 1, b: null },
      { a: 2, b: "x" },
    ]);
  });

  it("turns typed values into the text the CSV typing reads", () => {
    expect(cellText(null)).toBe("");
    expect(cellText(12.5)).toBe("12.5");
    expect(cellText(Number.NaN)).toBe("");
    expect(cellText(2n ** 70n)).toBe("1180591620717411303424");
    expect(cellText(true)).toBe("true");
    expect(cellText(new Date("2026-07-01T00:00:00Z"))).toBe("2026-07-01");
    expect(cellText(new Date("2026-07-01T10:30:00Z"))).toBe("2026-07-01T10:30:00.000Z");
    expect(cellText({ tags: ["a"], id: 1n })).toBe('{"tags":["a"],"id":"1"}');
  });

  it("keeps a parquet column's declared type: whole-number doubles are float, digit strings str", async () => {
    const path = join(folder, "declared.parquet");
    const columnData = [
      { name: "price", data: [29, 99.5, 249], type: "DOUBLE" as const },
      { name: "whole", data: [1, 2, 3], type: "DOUBLE" as const },
      { name: "zip", data: ["10115", "20095", "80331"], type: "STRING" as const },
      { name: "count", data: [1, 2, null], type: "INT32" as const },
      { name: "blank", data: [null, null, null], type: "DOUBLE" as const },
      { name: "big", data: [1n, 2n ** 60n + 1n, 3n], type: "INT64" as const },
    ];
    await writeFile(path, Buffer.from(parquetWriteBuffer({ columnData })));
    const table = await scanCsv(path, { format: "parquet" });
    expect(table.columns.map((column) => [column.name, column.type])).toEqual([
      ["price", "float"],
      ["whole", "float"],
      ["zip", "str"],
      ["count", "int"],
      ["blank", "float"],
      ["big", "str"],
    ]);
    const rows = await readRows(table);
    expect(rows[0]).toEqual({ price: 29, whole: 1, zip: "10115", count: 1, blank: null, big: "1" });
    // An int64 beyond 2^53 exactly as written: a number would round it.
    expect(rows[1]?.big).toBe("1152921504606846977");
    // The text the CSV conversion for the sandbox is written from keeps the float: pandas reads float64.
    const records: string[][] = [];
    for await (const { record } of readRecords(table)) records.push(record);
    expect(records[1]).toEqual(["29.0", "1.0", "10115", "1", "", "1"]);
  });

  it("types xlsx and JSON numbers by their values (no schema): whole numbers are int, as pandas reads them", async () => {
    const xlsx = join(folder, "numbers.xlsx");
    await writeExcelFile([
      ["n", "x"],
      [1, 1.5],
      [2, 2],
    ] as never).toFile(xlsx);
    const json = join(folder, "numbers.json");
    await writeFile(json, '[{"n": 1.0, "x": 1.5}, {"n": 2.0, "x": 2}]');
    for (const [path, format] of [
      [xlsx, "xlsx"],
      [json, "json"],
    ] as const) {
      const table = await scanCsv(path, { format });
      expect(table.columns.map((column) => [column.name, column.type])).toEqual([
        ["n", "int"],
        ["x", "float"],
      ]);
    }
  });
});
