import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromLangChainTool } from "@codeaction/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanCsv } from "./csv-table.ts";
import { csvTool, describeTable, maxResultBytesPerCall, rowsPerCall } from "./csv-tool.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-csv-tool-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const context = { runId: "run_test" };

describe("csvTool", () => {
  it("describes every column with its type, and the row count", async () => {
    const path = join(folder, "people.csv");
    await writeFile(
      path,
      "name,age,height,member,joined\nAda,36,1.7,true,2026-01-02\nGrace,,1.6,false,2026-03-04\n",
    );
    const description = describeTable(await scanCsv(path));
    expect(description).toContain("people.csv (2 rows)");
    expect(description).toContain("age (int, or None when blank)");
    expect(description).toContain("height (float)");
    expect(description).toContain("member (bool)");
    expect(description).toContain("joined (str, an ISO date YYYY-MM-DD)");
    expect(description).not.toContain("/workspace/data");
  });

  it("names the file's place in the sandbox and how its format is read there", async () => {
    const path = join(folder, "events.jsonl");
    await writeFile(path, '{"kind": "click"}\n');
    const table = await scanCsv(path, { format: "jsonl" });
    expect(describeTable(table, { dataPath: "/workspace/data/events.jsonl" })).toContain(
      'also in the sandbox, read-only, at /workspace/data/events.jsonl: for large files read it directly with pandas.read_json("/workspace/data/events.jsonl", lines=True)',
    );
  });

  it("returns typed rows through core's ToolSpec, with offset and limit", async () => {
    const path = join(folder, "scores.csv");
    await writeFile(path, "player,points\nA,1\nB,2\nC,3\n");
    const spec = fromLangChainTool(csvTool(await scanCsv(path)), "csv");
    expect(spec.name).toBe("load_scores");
    expect(await spec.invoke({}, context)).toEqual([
      { player: "A", points: 1 },
      { player: "B", points: 2 },
      { player: "C", points: 3 },
    ]);
    expect(await spec.invoke({ offset: 1, limit: 1 }, context)).toEqual([{ player: "B", points: 2 }]);
    await expect(spec.invoke({ offset: -1 }, context)).rejects.toThrow(/offset/);
  });

  it("reads consecutive pages on, and starts again for a page elsewhere, also when called concurrently", async () => {
    const path = join(folder, "pages.csv");
    await writeFile(path, `n\n${Array.from({ length: 10 }, (_, index) => index).join("\n")}\n`);
    const spec = fromLangChainTool(csvTool(await scanCsv(path)), "csv");
    const page = (offset: number, limit: number) => spec.invoke({ offset, limit }, context);
    expect(await page(0, 4)).toEqual([0, 1, 2, 3].map((n) => ({ n })));
    expect(await page(4, 4)).toEqual([4, 5, 6, 7].map((n) => ({ n })));
    expect(await page(1, 2)).toEqual([1, 2].map((n) => ({ n })));
    expect(await page(3, 100)).toEqual([3, 4, 5, 6, 7, 8, 9].map((n) => ({ n })));
    expect(await page(10, 5)).toEqual([]);
    const concurrent = await Promise.all([page(0, 5), page(5, 5), page(2, 1)]);
    expect(concurrent).toEqual([
      [0, 1, 2, 3, 4].map((n) => ({ n })),
      [5, 6, 7, 8, 9].map((n) => ({ n })),
      [{ n: 2 }],
    ]);
  });

  it("asks for pages when a file is bigger than one call may return, and streams every page", async () => {
    const path = join(folder, "big.csv");
    const row = `${"x".repeat(1000)},1\n`;
    const rowCount = Math.ceil((maxResultBytesPerCall * 1.5) / row.length);
    await writeFile(path, `text,n\n${row.repeat(rowCount)}`);
    const table = await scanCsv(path);
    expect(table.rowCount).toBe(rowCount);
    const pageSize = rowsPerCall(table);
    expect(pageSize).toBeLessThan(rowCount);
    expect(describeTable(table)).toContain(`at most ${pageSize.toLocaleString("en-US")} rows`);
    const spec = fromLangChainTool(csvTool(table), "csv");
    await expect(spec.invoke({}, context)).rejects.toThrow(`pass limit=${pageSize} and step offset= by it`);
    const first = await spec.invoke({ limit: pageSize }, context);
    // A full page must fit through the bridge, whose answers are capped at 16 MiB of JSON.
    expect(JSON.stringify(first).length).toBeLessThanOrEqual(16 * 1024 * 1024);
    const last = (await spec.invoke({ offset: pageSize, limit: pageSize }, context)) as unknown[];
    expect(last).toHaveLength(rowCount - pageSize);
  });

  it("says when the types come from a sample, and pages a sampled file by what it reads", async () => {
    const path = join(folder, "sampled.csv");
    const row = `${"y".repeat(1000)},1\n`;
    const rowCount = Math.ceil((maxResultBytesPerCall * 1.5) / row.length);
    await writeFile(path, `text,n\n${row.repeat(rowCount)}`);
    const table = await scanCsv(path, { sampleBytes: 64 * 1024 });
    expect(table.sample?.rows).toBe(Math.ceil((64 * 1024 - 7) / row.length));
    expect(table.rowCount).toBe(rowCount);
    const pageSize = rowsPerCall(table);
    expect(describeTable(table)).toContain(
      `types (and the values listed) are from a sample, the first ${table.sample?.rows} rows (0.1 MiB)`,
    );
    const spec = fromLangChainTool(csvTool(table), "csv");
    await expect(spec.invoke({}, context)).rejects.toThrow(`more than the ${pageSize} one call may return`);
    const tail = (await spec.invoke({ offset: rowCount - 3 }, context)) as unknown[];
    expect(tail).toHaveLength(3);
  });
});
