// The worker thread of scanInThread (scan-thread.ts): scans one data file and posts its progress,
// then the table or the failure.
import { parentPort, workerData } from "node:worker_threads";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { scanCsv } from "./csv-table.ts";
import type { ScanReport, ScanRequest } from "./scan-thread.ts";

const request = workerData as ScanRequest;
const report = (message: ScanReport) => parentPort?.postMessage(message);

scanCsv(request.file, {
  format: request.format,
  rowCount: request.rowCount,
  onProgress: (progress) => report({ type: "progress", progress }),
}).then(
  (table) => report({ type: "table", table }),
  (error: unknown) =>
    report(
      CsvInputError.isInstance(error)
        ? {
            type: "failed",
            problem: error.problem,
            ...(error.line === undefined ? {} : { line: error.line }),
          }
        : { type: "crashed", message: error instanceof Error ? error.message : String(error) },
    ),
);
