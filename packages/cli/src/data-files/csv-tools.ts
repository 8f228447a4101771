import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { placedFilePath } from "@codeaction/sandbox/prelaunch";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { stringify } from "csv-stringify";
import { describeReading, type Progress } from "../terminal/progress.ts";
import { type CsvTable, type ScanProgress, scanCsv } from "./csv-table.ts";
import { csvTool } from "./csv-tool.ts";
import type { DataFileArgument } from "./data-formats.ts";
import type { ScanJob } from "./scan-thread.ts";
import { readRecords } from "./table-records.ts";
import { checkConversionSize, conversionTooLarge, maxConvertedBytes } from "./unpack-limits.ts";

export type LoadedData = {
  tables: CsvTable[];
  tools: StructuredToolInterface[];
  /** The host files to place at /workspace/data (a parquet file as its CSV conversion). */
  sandboxFiles: string[];
  /** Removes the conversions. */
  close(): Promise<void>;
};

/**
 * Scans every data file (one after the other, each as a stream where its format allows; or takes
 * the scans under way) and makes
 * one loader tool per file. With `sandbox`, the tools name the file's place in the sandbox, and a
 * parquet file is converted to CSV on the host (the image has no parquet reader).
 */
export async function loadCsvTools(
  files: DataFileArgument[],
  options: {
    onFile?: (file: string) => void;
    onProgress?: (file: string, progress: ScanProgress) => void;
    sandbox?: boolean;
    /** Scans already under way (scanInThreads), one per file in order; without them each file is scanned here. */
    scans?: ScanJob[];
  } = {},
): Promise<LoadedData> {
  const loaded: LoadedData = { tables: [], tools: [], sandboxFiles: [], close: async () => {} };
  const taken = new Set<string>();
  let conversions: string | undefined;
  loaded.close = async () => {
    if (conversions) await rm(conversions, { recursive: true, force: true });
  };
  try {
    for (const [index, file] of files.entries()) {
      const { path, format } = file;
      options.onFile?.(path);
      const table = await scanOf(file, options.scans?.[index], options.onProgress);
      let name = `load_${table.name}`;
      for (let index = 2; taken.has(name); index += 1) name = `load_${table.name}_${index}`;
      taken.add(name);
      let sandboxFile = path;
      if (options.sandbox && format === "parquet") {
        // Refused from the typing sample before a byte is written; writeCsv counts as it writes.
        checkConversionSize(path, table);
        conversions ??= await mkdtemp(join(tmpdir(), "codeaction-data-"));
        sandboxFile = join(conversions, `${basename(path)}.csv`);
        await writeCsv(table, sandboxFile);
      }
      loaded.tables.push(table);
      loaded.sandboxFiles.push(sandboxFile);
      loaded.tools.push(
        csvTool(table, { name, ...(options.sandbox ? { dataPath: placedFilePath(sandboxFile) } : {}) }),
      );
    }
  } catch (error) {
    await loaded.close();
    throw error;
  }
  return loaded;
}

/** A file's table: from its scan under way, or scanned now. */
function scanOf(
  file: DataFileArgument,
  job: ScanJob | undefined,
  onProgress: ((file: string, progress: ScanProgress) => void) | undefined,
): Promise<CsvTable> {
  const report = onProgress ? (progress: ScanProgress) => onProgress(file.path, progress) : undefined;
  if (job) {
    if (report) job.listen(report);
    return job.table;
  }
  return scanCsv(file.path, { format: file.format, ...(report ? { onProgress: report } : {}) });
}

/** `loadCsvTools` showing its progress: the step, then (on a terminal) rows and bytes as each file is read. */
export function loadDataFiles(
  files: DataFileArgument[],
  progress: Progress,
  options: { sandbox?: boolean; scans?: ScanJob[] } = {},
): Promise<LoadedData> {
  return loadCsvTools(files, {
    // The file's name, as the counting line (describeReading) gives it; errors give the whole path.
    onFile: (file) => progress.update(`reading ${basename(file)}`),
    onProgress: (file, counts) => progress.count(describeReading(file, counts)),
    ...options,
  });
}

/**
 * A table's records (the header first) as a CSV file, streamed; a CsvInputError once the text
 * passes `maxConvertedBytes` (the sample's estimate can be beaten by rows longer than its own).
 */
async function writeCsv(table: CsvTable, path: string): Promise<void> {
  const records = Readable.from(
    (async function* () {
      for await (const { record } of readRecords(table)) yield record;
    })(),
  );
  let written = 0;
  const counted = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      written += chunk.length;
      if (written > maxConvertedBytes)
        throw conversionTooLarge(table.file, `more than ${maxConvertedBytes / 1024 ** 2} MiB`);
      yield chunk;
    }
  };
  await pipeline(records, stringify(), counted, createWriteStream(path));
}
