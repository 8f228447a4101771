// Data files scanned in worker threads: a scan is CPU work (parsing the typing sample), and a
// command that starts it before it imports LangChain gets both done at once on a machine with a
// second core (Node's module loader holds this thread for a whole import).
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { workerEnvironment } from "@codeaction/sandbox/prelaunch";
import { cliAssets } from "../cli-assets.ts";
import { CsvInputError } from "../errors/csv-input-error.ts";
import type { CsvTable, ScanOptions, ScanProgress } from "./csv-table.ts";
import type { DataFileArgument } from "./data-formats.ts";

/**
 * The heap a scan's worker may use (V8's old and young generations): a file that needs more is
 * refused with a CsvInputError, and the worker's memory goes with it. The unpack limits
 * (unpack-limits.ts) keep every file they pass well under it.
 */
export const scanWorkerHeapMebibytes = 384;

/** What the worker is given. */
export type ScanRequest = DataFileArgument & { file: string; rowCount: RowCount };

/** How a scan finds the rows past its typing sample (ScanOptions.rowCount). */
type RowCount = NonNullable<ScanOptions["rowCount"]>;

/** What the worker says. */
export type ScanReport =
  | { type: "progress"; progress: ScanProgress }
  | { type: "table"; table: CsvTable }
  | { type: "failed"; problem: string; line?: number }
  | { type: "crashed"; message: string };

/** A scan under way: its table (or its CsvInputError), and its progress for whoever listens. */
export type ScanJob = {
  file: DataFileArgument;
  table: Promise<CsvTable>;
  /** Hears the latest progress at once, then each new one. */
  listen(onProgress: (progress: ScanProgress) => void): void;
  /** Where the scan ran, once its table settled ("this thread" when a worker could not). */
  readonly scannedIn: "worker" | "this thread" | undefined;
  /** The worker's entry module (cli-assets.ts: the bundle's own in the command), once a worker started. */
  readonly workerEntry: string | undefined;
  /** How long the scan took, from its start to its table (or its failure), once settled. */
  readonly durationMs: number | undefined;
};

/**
 * Starts scanning each file in a worker thread of its own. A worker that cannot start or dies
 * falls back to a scan in this thread; a file's own problem rejects with its CsvInputError.
 */
export function scanInThreads(
  files: DataFileArgument[],
  options: { heapMebibytes?: number; rowCount?: RowCount } = {},
): ScanJob[] {
  const heapMebibytes = options.heapMebibytes ?? scanWorkerHeapMebibytes;
  return files.map((file) => scanInThread(file, { heapMebibytes, rowCount: options.rowCount ?? "counted" }));
}

function scanInThread(
  file: DataFileArgument,
  settings: Omit<ScanPlace, "scannedIn" | "workerEntry">,
): ScanJob {
  let latest: ScanProgress | undefined;
  let listener: ((progress: ScanProgress) => void) | undefined;
  const onProgress = (progress: ScanProgress) => {
    latest = progress;
    listener?.(progress);
  };
  const where: ScanPlace = { scannedIn: undefined, workerEntry: undefined, ...settings };
  const started = performance.now();
  let durationMs: number | undefined;
  const table = scanTable(file, onProgress, where);
  const settle = () => {
    durationMs = Math.round(performance.now() - started);
  };
  table.then(settle, settle);
  // A command that fails before it reads the table must not die of an unhandled rejection.
  table.catch(() => undefined);
  return {
    file,
    table,
    get scannedIn() {
      return where.scannedIn;
    },
    get workerEntry() {
      return where.workerEntry;
    },
    get durationMs() {
      return durationMs;
    },
    listen(onProgressHeard) {
      listener = onProgressHeard;
      if (latest) onProgressHeard(latest);
    },
  };
}

/** Where a scan runs, filled in as it goes (a ScanJob's getters read it). */
type ScanPlace = {
  scannedIn: ScanJob["scannedIn"];
  workerEntry: string | undefined;
  /** The worker's heap limit (V8's old generation). */
  readonly heapMebibytes: number;
  readonly rowCount: RowCount;
};

/** The file's table, scanned in a worker of its own; in this thread when no worker starts or one dies. */
function scanTable(
  file: DataFileArgument,
  onProgress: (progress: ScanProgress) => void,
  where: ScanPlace,
): Promise<CsvTable> {
  return new Promise<CsvTable>((resolve, reject) => {
    // Loaded only here: the command imports this module before anything heavy.
    const inThisThread = () => {
      where.scannedIn = "this thread";
      import("./csv-table.ts")
        .then(({ scanCsv }) =>
          scanCsv(file.path, { format: file.format, onProgress, rowCount: where.rowCount }),
        )
        .then(resolve, reject);
    };
    // Outside the try: a package without its worker entry is broken, not a reason to scan here
    // quietly (AssetMissingError names the fix).
    const workerFile = cliAssets.url("scan-worker");
    let worker: Worker;
    try {
      worker = new Worker(workerFile, {
        workerData: { ...file, file: file.path, rowCount: where.rowCount } satisfies ScanRequest,
        env: workerEnvironment(),
        resourceLimits: { maxOldGenerationSizeMb: where.heapMebibytes, maxYoungGenerationSizeMb: 32 },
      });
      where.workerEntry = fileURLToPath(workerFile);
    } catch {
      inThisThread();
      return;
    }
    let settled = false;
    worker.on("message", (report: ScanReport) => {
      if (report.type === "progress") return onProgress(report.progress);
      settled = true;
      where.scannedIn = "worker";
      void worker.terminate();
      if (report.type === "table") resolve(report.table);
      else if (report.type === "failed") {
        const { problem, line } = report;
        reject(new CsvInputError({ file: file.path, problem, ...(line === undefined ? {} : { line }) }));
      } else reject(new Error(`scanning ${file.path} failed: ${report.message}`));
    });
    const fallBack = () => {
      if (!settled) inThisThread();
      settled = true;
    };
    worker.on("error", (error: Error & { code?: string }) => {
      // Never scanned again here: this thread's memory has no such bound.
      if (error.code !== "ERR_WORKER_OUT_OF_MEMORY") return fallBack();
      settled = true;
      where.scannedIn = "worker";
      reject(outOfMemory(file.path, where.heapMebibytes, error));
    });
    worker.on("exit", fallBack);
  });
}

function outOfMemory(file: string, heapMebibytes: number, error: Error): CsvInputError {
  return new CsvInputError({
    file,
    problem: `reading it needed more than the ${heapMebibytes} MiB of memory a data file's reader may use, and it was stopped; save it as CSV or parquet, which are read as a stream, or split it`,
    cause: error,
  });
}
