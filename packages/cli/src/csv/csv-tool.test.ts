import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromLangChainTool } from "@codeaction/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scanCsv } from "./csv-table.ts";
import { csvTool, describeTable, maxBytesPerCall, rowsPerCall } from "./csv-tool.ts";

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

  it("asks for pages when a file is bigger than one call may return, and streams every page", async () => {
    const path = join(folder, "big.csv");
    const row = `${"x".repeat(1000)},1\n`;
    const rowCount = Math.ceil((maxBytesPerCall * 1.5) / row.length);
    await writeFile(path, `text,n\n${row.repeat(rowCount)}`);
    const table = await scanCsv(path);
    expect(table.rowCount).toBe(rowCount);
    const pageSize = rowsPerCall(table);
    expect(pageSize).toBeLessThan(rowCount);
    expect(describeTable(table)).toContain(`at most ${pageSize.toLocaleString("en-US")} rows`);
    const spec = fromLangChainTool(csvTool(table), "csv");
    await expect(spec.invoke({}, context)).rejects.toThrow(`pass limit=${pageSize} and step offset= by it`);
    const last = (await spec.invoke({ offset: pageSize, limit: pageSize }, context)) as unknown[];
    expect(last).toHaveLength(rowCount - pageSize);
  });
});
