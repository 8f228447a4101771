// Reads one data file as `ask --file` and the desk do (a scan in its worker thread, then the loaded
// tools with the sandbox's conversion, then a page of rows as the load tool reads it) and prints
// the process's peak resident memory (VmHWM) before and after, and the outcome, as one JSON line.
// Run as a child process by data-file-bounds.test.ts and the bench, so its peak is its own.
// Arguments: the warm-up file (read first, so the libraries' own memory is in the baseline), the file.
import { readFileSync } from "node:fs";
import { loadCsvTools } from "../src/data-files/csv-tools.ts";
import { formatFromPath } from "../src/data-files/data-formats.ts";
import { readRows } from "../src/data-files/row-reader.ts";
import { scanInThreads } from "../src/data-files/scan-thread.ts";

const peakKibibytes = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);

async function read(path: string): Promise<void> {
  const files = [{ path, format: formatFromPath(path) }];
  const loaded = await loadCsvTools(files, { sandbox: true, scans: scanInThreads(files) });
  try {
    for (const table of loaded.tables) await readRows(table, { limit: 5 });
  } finally {
    await loaded.close();
  }
}

const [warmUp, file] = process.argv.slice(2) as [string, string];
await read(warmUp);
const before = peakKibibytes();
const started = performance.now();
let error: string | undefined;
try {
  await read(file);
} catch (caught) {
  error = caught instanceof Error ? caught.message : String(caught);
}
const milliseconds = performance.now() - started;
const after = peakKibibytes();
process.stdout.write(`${JSON.stringify({ before, after, error, milliseconds })}\n`);
