import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { countLines, scanCsv, tableName } from "./csv-table.ts";
import { describeTable } from "./csv-tool.ts";
import { readRows } from "./row-reader.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-csv-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function csvFile(name: string, content: string | Buffer): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, content);
  return path;
}

async function scanError(path: string): Promise<CsvInputError> {
  const error = await scanCsv(path).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!CsvInputError.isInstance(error)) throw new Error(`expected a CsvInputError, got ${String(error)}`);
  return error;
}

describe("scanCsv and readRows", () => {
  it("reads a semicolon CSV with a BOM, quoted delimiters, quoted commas and an embedded newline, typed per column", async () => {
    const path = await csvFile(
      "customers.csv",
      '\uFEFFname;city;visits;score;active;note\r\n"Smith, John";"Zürich; Altstadt";3;4.5;true;"line one\nline two"\r\nAda;Paris;;0.25;FALSE;\r\n',
    );
    const table = await scanCsv(path);
    expect(table.delimiter).toBe(";");
    expect(table.rowCount).toBe(2);
    expect(table.columns.map((column) => [column.name, column.type])).toEqual([
      ["name", "str"],
      ["city", "str"],
      ["visits", "int"],
      ["score", "float"],
      ["active", "bool"],
      ["note", "str"],
    ]);
    expect(await readRows(table)).toEqual([
      {
        name: "Smith, John",
        city: "Zürich; Altstadt",
        visits: 3,
        score: 4.5,
        active: true,
        note: "line one\nline two",
      },
      { name: "Ada", city: "Paris", visits: null, score: 0.25, active: false, note: null },
    ]);
  });

  it("sniffs tab and pipe delimiters", async () => {
    const tabs = await scanCsv(await csvFile("tabs.tsv", "a\tb\n1\tx, y\n2\tz\n"));
    expect(tabs.delimiter).toBe("\t");
    expect(await readRows(tabs)).toEqual([
      { a: 1, b: "x, y" },
      { a: 2, b: "z" },
    ]);
    const pipes = await scanCsv(await csvFile("pipes.csv", "a|b|c\n1|2|3\n"));
    expect(pipes.delimiter).toBe("|");
    expect(pipes.columns).toHaveLength(3);
  });

  it("keeps identifiers with leading zeros as strings and widens int columns holding a float to float", async () => {
    const table = await scanCsv(await csvFile("codes.csv", "zip,amount\n00501,1\n10001,2.5\n"));
    expect(table.columns.map((column) => column.type)).toEqual(["str", "float"]);
    expect(await readRows(table)).toEqual([
      { zip: "00501", amount: 1 },
      { zip: "10001", amount: 2.5 },
    ]);
  });

  it("names blank and duplicate header cells", async () => {
    const table = await scanCsv(await csvFile("headers.csv", "id,,id\n1,2,3\n"));
    expect(table.columns.map((column) => column.name)).toEqual(["id", "column_2", "id_2"]);
  });

  it("reads the seed's orders.csv: 500 rows, ints and floats, regions as categories, dates", async () => {
    const table = await scanCsv(new URL("../../../../examples/data/orders.csv", import.meta.url).pathname);
    expect(table.rowCount).toBe(500);
    const byName = Object.fromEntries(table.columns.map((column) => [column.name, column]));
    expect(byName.quantity?.type).toBe("int");
    expect(byName.unit_price?.type).toBe("float");
    expect(byName.region?.categories).toEqual(["APAC", "EMEA", "LATAM", "North America"]);
    expect(byName.date?.isoDates).toBe(true);
    expect(byName.order_id?.categories).toBeUndefined();
    const page = await readRows(table, { offset: 498, limit: 10 });
    expect(page.map((row) => row.order_id)).toEqual(["O-0499", "O-0500"]);
  });

  it("reads a header-only file as zero rows", async () => {
    const table = await scanCsv(await csvFile("header-only.csv", "a,b\n"));
    expect(table.rowCount).toBe(0);
    expect(await readRows(table)).toEqual([]);
  });

  it("refuses a missing file, an empty file, a folder and a binary file, naming the file", async () => {
    expect((await scanError(join(folder, "nope.csv"))).message).toBe(
      `${join(folder, "nope.csv")}: no such file`,
    );
    expect((await scanError(await csvFile("empty.csv", ""))).message).toMatch(
      /empty\.csv: the file is empty/,
    );
    expect((await scanError(await csvFile("blank.csv", "\uFEFF\n\n"))).message).toMatch(
      /blank\.csv: the file is empty/,
    );
    expect((await scanError(folder)).message).toMatch(/a folder, not a CSV file/);
    expect(
      (await scanError(await csvFile("image.csv", Buffer.from([0x89, 0x50, 0x00, 0x47])))).message,
    ).toMatch(/not a text CSV file/);
  });

  it("names the line of a ragged row and of an unclosed quote", async () => {
    const ragged = await scanError(await csvFile("ragged.csv", "a,b,c\n1,2,3\n4,5\n6,7,8\n"));
    expect(ragged.line).toBe(3);
    expect(ragged.message).toMatch(/ragged\.csv line 3: the row has 2 fields but the header has 3/);
    const unclosed = await scanError(await csvFile("unclosed.csv", 'a,b\n1,"open\n2,3\n'));
    expect(unclosed.message).toMatch(/unclosed\.csv line \d+: a quoted field is never closed/);
  });

  it("turns file names into Python identifiers", () => {
    expect(tableName("data/Q3 Orders.csv")).toBe("q3_orders");
    expect(tableName("2026-sales.csv")).toBe("table_2026_sales");
    expect(tableName("---.csv")).toBe("csv");
  });
});

describe("a file bigger than the typing sample", () => {
  // 200 rows of "id,amount,flag": ids and amounts are ints, flags booleans, in the first rows only.
  const head = Array.from({ length: 200 }, (_, index) => `${index},${index * 2},${index % 2 === 0}`);

  it("is typed from its first rows and counted by line breaks; later cells that do not fit come as text", async () => {
    const tail = ["200,2.5,maybe", "", "201,n/a,false", "202,,true"];
    const path = await csvFile("sampled.csv", `id,amount,flag\r\n${[...head, ...tail].join("\r\n")}\r\n\r\n`);
    const table = await scanCsv(path, { sampleBytes: 512 });
    expect(table.sample?.rows).toBeGreaterThan(10);
    expect(table.sample?.rows).toBeLessThan(200);
    expect(table.sample?.rowCountEstimated).toBe(false);
    // Blank lines are not rows, for csv-parse nor for the count.
    expect(table.rowCount).toBe(203);
    expect(table.columns.map((column) => [column.name, column.type, column.hasEmpty])).toEqual([
      ["id", "int", false],
      ["amount", "int", false],
      ["flag", "bool", false],
    ]);
    const rows = await readRows(table, { offset: 199 });
    expect(rows).toEqual([
      { id: 199, amount: 398, flag: false },
      { id: 200, amount: 2.5, flag: "maybe" },
      { id: 201, amount: "n/a", flag: false },
      { id: 202, amount: null, flag: true },
    ]);
  });

  it("is typed from every cell when it fits the sample, as before", async () => {
    const path = await csvFile("whole.csv", `id,amount,flag\n${head.join("\n")}\n`);
    const table = await scanCsv(path, { sampleBytes: 1024 * 1024 });
    expect(table.sample).toBeUndefined();
    expect(table.rowCount).toBe(200);
  });

  it("says its count is an estimate when the sample held a quoted line break", async () => {
    const rows = head.map((row, index) => (index === 3 ? `${row},"two\nlines"` : `${row},x`));
    const path = await csvFile("multiline.csv", `id,amount,flag,note\n${rows.join("\n")}\n`);
    const table = await scanCsv(path, { sampleBytes: 256 });
    expect(table.sample?.rowCountEstimated).toBe(true);
    expect(table.rowCount).toBe(200);
  });

  it("a JSON Lines file: columns and types from its first lines, the rest counted exactly, pages read with the sample's keys", async () => {
    const lines = Array.from({ length: 200 }, (_, index) =>
      JSON.stringify({ id: index, amount: index * 2, note: index === 3 ? "two\nlines" : "x" }),
    );
    // Past the sample: a misfit amount, a key never seen in the sample, a blank line, CRLF.
    const tail = ['{"id": 200, "amount": "n/a", "note": "y", "late": 1}', "", '{"id": 201, "amount": 7}'];
    const path = await csvFile("sampled.jsonl", `${[...lines, ...tail].join("\r\n")}\r\n`);
    const table = await scanCsv(path, { format: "jsonl", sampleBytes: 1024 });
    expect(table.sample?.rows).toBeGreaterThan(10);
    expect(table.sample?.rows).toBeLessThan(200);
    // An escaped line break in a value does not make the count an estimate.
    expect(table.sample?.rowCountEstimated).toBe(false);
    expect(table.rowCount).toBe(202);
    expect(table.columns.map((column) => [column.name, column.type])).toEqual([
      ["id", "int"],
      ["amount", "int"],
      ["note", "str"],
    ]);
    expect(await readRows(table, { offset: 199 })).toEqual([
      { id: 199, amount: 398, note: "x" },
      { id: 200, amount: "n/a", note: "y" },
      { id: 201, amount: 7, note: null },
    ]);
    expect(describeTable(table)).toContain(
      "The columns (the keys), the types (and the values listed) are from a sample, the first",
    );
    expect(describeTable(table)).toContain("; a key first seen later is not among the columns.");
    const whole = await scanCsv(path, { format: "jsonl", sampleBytes: 1024 * 1024 });
    expect(whole.sample).toBeUndefined();
    expect(whole.rowCount).toBe(202);
    expect(whole.columns.map((column) => column.name)).toEqual(["id", "amount", "note", "late"]);
    // The text size a page is planned with is every row's (the sample's per row times the rows, so
    // about 0.76 of it here, where the first rows' numbers are shorter), not the sample's (0.1).
    expect(table.textBytes / whole.textBytes).toBeGreaterThan(0.6);
    expect(table.textBytes / whole.textBytes).toBeLessThan(1.25);
  });

  it("with rowCount estimated, reads nothing past the sample: the rest is estimated from its bytes per row, and says about", async () => {
    // Rows of one width, then a tail of rows twice as long: a count by lines would see them all.
    const rows = Array.from({ length: 1000 }, (_, index) => `${String(index).padStart(6, "0")},x`);
    const tail = Array.from({ length: 100 }, (_, index) => `${String(index).padStart(14, "0")},y`);
    const path = await csvFile("estimated.csv", `id,flag\n${[...rows, ...tail].join("\n")}\n`);
    const counted = await scanCsv(path, { sampleBytes: 512 });
    const estimated = await scanCsv(path, { sampleBytes: 512, rowCount: "estimated" });
    expect(counted.rowCount).toBe(1100);
    expect(counted.sample?.rowCountEstimated).toBe(false);
    // 1000 rows of 9 bytes and 100 of 17: the sample's 9 bytes a row make (9000 + 1700) / 9 rows.
    expect(estimated.rowCount).toBe(Math.round((9000 + 1700) / 9));
    expect(estimated.sample?.rowCountEstimated).toBe(true);
    expect(estimated.columns).toEqual(counted.columns);
    expect(describeTable(estimated)).toContain(`(about ${estimated.rowCount.toLocaleString("en-US")} rows)`);
  });

  it("counts lines with content from a byte offset: LF, CRLF, blank lines, no final line break", async () => {
    const path = await csvFile("lines.txt", "skip\na\r\n\r\nb\n\nc");
    expect(await countLines(path, 0)).toBe(4);
    expect(await countLines(path, 5)).toBe(3);
    expect(await countLines(await csvFile("empty.txt", ""), 0)).toBe(0);
  });
});
