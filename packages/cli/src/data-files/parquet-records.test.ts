import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromLangChainTool } from "@codeaction/core";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanCsv, typingSampleBytes } from "./csv-table.ts";
import { csvTool, describeTable } from "./csv-tool.ts";
import { loadCsvTools } from "./csv-tools.ts";
import { readRows } from "./row-reader.ts";

const rowCount = 100_000;
/** Row groups of 30,000 rows, each column chunk in pages of about 64 KiB: a page read starts mid-chunk. */
const rowGroupSize = 30_000;
/** Rows from here on hold a region and a blank price the first rows do not: only a full read sees them. */
const lateRows = 90_000;

/** Row `index` of the generated file, as the loader returns it. */
function expectedRow(index: number) {
  return {
    id: index,
    region: index >= lateRows ? "LATAM" : index % 2 === 0 ? "APAC" : "EMEA",
    price: index === lateRows + 5 ? null : (index % 40) + 0.5,
    note: `order ${index} ${"n".repeat(50)}`,
  };
}

let folder: string;
let path: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-parquet-"));
  path = join(folder, "orders.parquet");
  const rows = Array.from({ length: rowCount }, (_, index) => expectedRow(index));
  const columnData = [
    { name: "id", data: rows.map((row) => row.id), type: "INT32" as const },
    { name: "region", data: rows.map((row) => row.region), type: "STRING" as const },
    { name: "price", data: rows.map((row) => row.price), type: "DOUBLE" as const },
    { name: "note", data: rows.map((row) => row.note), type: "STRING" as const },
  ];
  await writeFile(path, Buffer.from(parquetWriteBuffer({ columnData, rowGroupSize, pageSize: 64 * 1024 })));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("a parquet file bigger than the typing sample", () => {
  it("is typed from its first rows, its schema and its metadata: the exact row count, no later value claimed", async () => {
    const table = await scanCsv(path, { format: "parquet" });
    expect(table.rowCount).toBe(rowCount);
    expect(table.sample?.rowCountEstimated).toBe(false);
    const sampleRows = table.sample?.rows ?? rowCount;
    // The sample ends inside the second row group, after about typingSampleBytes of text.
    expect(sampleRows).toBeGreaterThan(rowGroupSize);
    expect(sampleRows).toBeLessThan(2 * rowGroupSize);
    expect(table.sample?.bytes).toBeGreaterThanOrEqual(typingSampleBytes);
    expect(table.sample?.bytes).toBeLessThan(typingSampleBytes * 1.1);
    expect(table.columns).toEqual([
      { name: "id", type: "int", hasEmpty: false },
      { name: "region", type: "str", hasEmpty: false, categories: ["APAC", "EMEA"] },
      { name: "price", type: "float", hasEmpty: false },
      { name: "note", type: "str", hasEmpty: false },
    ]);
    const description = describeTable(table);
    expect(description).toContain("orders.parquet (100,000 rows)");
    expect(description).toContain(
      `The types are the file's schema; the values listed and "or None when blank" are from a sample, the first ${sampleRows.toLocaleString("en-US")} rows (4.0 MiB of text), and later rows may hold other values or blanks (a later int beyond 2^53 comes as its text).`,
    );
    // The text size of every row, from the sample's: what a page's size is planned with.
    const conversion = await loadCsvTools([{ path, format: "parquet" }], { sandbox: true });
    try {
      const csv = await readFile(conversion.sandboxFiles[0]!, "utf8");
      expect(table.textBytes / csv.length).toBeGreaterThan(0.9);
      expect(table.textBytes / csv.length).toBeLessThan(1.1);
      // The conversion for the sandbox reads every row, whatever the scan read.
      const lines = csv.trimEnd().split("\n");
      expect(lines).toHaveLength(rowCount + 1);
      expect(lines[lateRows + 6]).toBe(`${lateRows + 5},LATAM,,order ${lateRows + 5} ${"n".repeat(50)}`);
    } finally {
      await conversion.close();
    }
    // A later value the sample did not see comes through as it is.
    expect(await readRows(table, { offset: lateRows + 4, limit: 2 })).toEqual([
      expectedRow(lateRows + 4),
      expectedRow(lateRows + 5),
    ]);
  });

  it("reads a page from the row group that holds its first row, and pages on from there", async () => {
    const table = await scanCsv(path, { format: "parquet" });
    const expected = (offset: number, limit: number) =>
      Array.from({ length: limit }, (_, index) => expectedRow(offset + index));
    // Across a row group boundary (60,000).
    expect(await readRows(table, { offset: 59_995, limit: 10 })).toEqual(expected(59_995, 10));
    const spec = fromLangChainTool(csvTool(table), "parquet");
    const page = (offset: number, limit: number) => spec.invoke({ offset, limit }, { runId: "run_test" });
    expect(await page(75_000, 3)).toEqual(expected(75_000, 3));
    expect(await page(75_003, 3)).toEqual(expected(75_003, 3));
    expect(await page(10, 2)).toEqual(expected(10, 2));
    expect(await page(rowCount - 2, 5)).toEqual(expected(rowCount - 2, 2));
  });

  it("gives a later int64 beyond 2^53 in a column typed int from the sample as its exact text", async () => {
    const big = join(folder, "ids.parquet");
    const ids = Array.from({ length: 2_000 }, (_, index) =>
      index === 1_500 ? 2n ** 60n + 1n : BigInt(index),
    );
    await writeFile(
      big,
      Buffer.from(parquetWriteBuffer({ columnData: [{ name: "id", data: ids, type: "INT64" }] })),
    );
    const table = await scanCsv(big, { format: "parquet", sampleBytes: 1_000 });
    expect(table.sample?.rows).toBeLessThan(1_500);
    expect(table.columns).toEqual([{ name: "id", type: "int", hasEmpty: false }]);
    expect(describeTable(table)).toContain("(a later int beyond 2^53 comes as its text)");
    expect(await readRows(table, { offset: 1_499, limit: 3 })).toEqual([
      { id: 1_499 },
      { id: "1152921504606846977" },
      { id: 1_501 },
    ]);
  });

  it("does not decode the row groups before a page: a page beyond a broken first row group reads", async () => {
    const table = await scanCsv(path, { format: "parquet" });
    const broken = join(folder, "broken.parquet");
    await writeFile(broken, await readFile(path));
    // Overwrite the first row group's column chunks, keeping the footer: its metadata still reads.
    const metadata = await parquetMetadataAsync(await asyncBufferFromFile(broken));
    const handle = await open(broken, "r+");
    try {
      for (const chunk of metadata.row_groups[0]!.columns) {
        const start = Number(chunk.meta_data!.dictionary_page_offset ?? chunk.meta_data!.data_page_offset);
        await handle.write(
          Buffer.alloc(Number(chunk.meta_data!.total_compressed_size), 0xff),
          0,
          undefined,
          start,
        );
      }
    } finally {
      await handle.close();
    }
    const brokenTable = { ...table, file: broken };
    await expect(readRows(brokenTable, { offset: 0, limit: 1 })).rejects.toThrow(
      /broken\.parquet.*a parquet row group could not be read/,
    );
    expect(await readRows(brokenTable, { offset: 45_000, limit: 2 })).toEqual([
      expectedRow(45_000),
      expectedRow(45_001),
    ]);
  });
});
