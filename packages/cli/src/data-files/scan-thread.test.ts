import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { type ScanProgress, scanCsv } from "./csv-table.ts";
import { scanInThreads } from "./scan-thread.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-scan-thread-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function dataFile(name: string, content: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, content);
  return path;
}

describe("scanInThreads", () => {
  it("scans each file in a worker, to the table a scan in this thread gives, with its progress", async () => {
    const rows = Array.from(
      { length: 30_000 },
      (_, index) => `${index},${index % 7 === 0 ? "" : "x"},${index / 4}`,
    );
    const csv = await dataFile("big.csv", `id,flag,share\n${rows.join("\n")}\n`);
    const json = await dataFile("small.jsonl", '{"a": 1, "b": "x"}\n{"a": 2.5, "b": null}\n');
    const [first, second] = scanInThreads([
      { path: csv, format: "csv" },
      { path: json, format: "jsonl" },
    ]);
    const heard: ScanProgress[] = [];
    first?.listen((progress) => heard.push(progress));
    expect(await first?.table).toEqual(await scanCsv(csv, { format: "csv" }));
    expect(await second?.table).toEqual(await scanCsv(json, { format: "jsonl" }));
    expect([first?.scannedIn, second?.scannedIn]).toEqual(["worker", "worker"]);
    // Every 10,000 rows, then the end: whatever was missed before listening, the latest is heard.
    expect(heard.at(-1)).toMatchObject({ rows: 30_000 });
  });

  it("rejects with the file's own CsvInputError: file, line and problem as a scan here says them", async () => {
    const ragged = await dataFile("ragged.csv", "a,b\n1,2\n3,4,5\n");
    const [job] = scanInThreads([{ path: ragged, format: "csv" }]);
    const error = await job?.table.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const here = (await scanCsv(ragged).catch((caught: unknown) => caught)) as CsvInputError;
    expect(CsvInputError.isInstance(error)).toBe(true);
    expect(job?.scannedIn).toBe("worker");
    expect(error).toMatchObject({ file: ragged, line: here.line, message: here.message });
  });

  it("a missing file rejects with the message a scan here gives", async () => {
    const missing = join(folder, "missing.csv");
    const [job] = scanInThreads([{ path: missing, format: "csv" }]);
    const here = (await scanCsv(missing).catch((caught: unknown) => caught)) as Error;
    await expect(job?.table).rejects.toThrow(here.message);
  });
});

describe("the scan worker's memory (issue 45 #3)", () => {
  it("a file that needs more than the worker's heap is refused, never scanned again in this thread", async () => {
    // A JSON array is read whole: 16 MiB of small records need far more than a 16 MiB heap.
    const record = '{"a":1,"b":2},';
    const json = await dataFile(
      "big.json",
      `[${record.repeat((16 * 1024 * 1024) / record.length)}{"a":1,"b":2}]`,
    );
    const [job] = scanInThreads([{ path: json, format: "json" }], { heapMebibytes: 16 });
    const error = await job?.table.catch((caught: unknown) => caught);
    expect(CsvInputError.isInstance(error)).toBe(true);
    expect((error as CsvInputError).problem).toMatch(
      /needed more than the 16 MiB of memory .* save it as CSV or parquet/,
    );
    expect(job?.scannedIn).toBe("worker");
  });
});
