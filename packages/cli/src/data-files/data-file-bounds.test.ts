// Issue 45 #3: data files that expand far past their size are refused on the host before they
// expand, with the host's peak memory read from /proc in a child process that reads them as
// `ask --file` and a desk upload do (scan worker, load tools, the sandbox's conversion, rows).
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dictionaryParquet,
  longStringWorkbook,
  smallParquet,
  smallWorkbook,
  zipBombWorkbook,
} from "../../test/hostile-data-files.ts";
import { readInChild } from "../../test/read-data-file.ts";

/** The most the child's peak resident memory may grow while it reads and refuses a hostile file. */
const maxGrowthKibibytes = 256 * 1024;

let folder: string;
let conversions: string;
const warmUps = { xlsx: "", parquet: "" };

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-bounds-"));
  conversions = await mkdtemp(join(tmpdir(), "codeaction-bounds-tmp-"));
  warmUps.xlsx = await smallWorkbook(folder);
  warmUps.parquet = await smallParquet(folder);
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  await rm(conversions, { recursive: true, force: true });
});

describe("data files that expand are refused before they expand", () => {
  it("a zip-bomb .xlsx (a few MiB unpacking to 1 GiB) is refused at the per-entry limit", async () => {
    const file = await zipBombWorkbook(folder);
    const outcome = await readInChild({ warmUp: warmUps.xlsx, file, tmpdir: conversions });
    expect(outcome.error).toMatch(
      /entry xl\/worksheets\/sheet1\.xml unpacks to more than 64 MiB.*save it as CSV or parquet/,
    );
    expect(outcome.after - outcome.before).toBeLessThan(maxGrowthKibibytes);
  });

  it("an .xlsx of long strings whose entries each pass is refused at the total limit", async () => {
    const file = await longStringWorkbook(folder);
    const outcome = await readInChild({ warmUp: warmUps.xlsx, file, tmpdir: conversions });
    expect(outcome.error).toMatch(
      /its entries unpack to more than 128 MiB together.*save it as CSV or parquet/,
    );
    expect(outcome.after - outcome.before).toBeLessThan(maxGrowthKibibytes);
  });

  it("a small dictionary-encoded parquet file is refused before its CSV conversion is written", async () => {
    const file = await dictionaryParquet(folder);
    const outcome = await readInChild({ warmUp: warmUps.parquet, file, tmpdir: conversions });
    expect(outcome.error).toMatch(
      /as CSV for the sandbox this parquet file takes about \d+ MiB.*at most 512 MiB/,
    );
    expect(outcome.after - outcome.before).toBeLessThan(maxGrowthKibibytes);
    // Nothing was left in the child's temporary folder (the conversion's folder was never filled and is gone).
    expect(await readdir(conversions)).toEqual([]);
  });
});
