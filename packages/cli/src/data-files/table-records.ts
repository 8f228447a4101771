// The records of a data file as text cells, the header first, whatever its format: CSV and TSV
// through csv-parse (their errors named by line), the others through data-formats.ts.
import { createReadStream } from "node:fs";
import { CsvError, parse } from "csv-parse";
import { CsvInputError } from "../errors/csv-input-error.ts";
import { type DataFormat, readSourceRecords, type SourceReadOptions } from "./data-formats.ts";
import type { Delimiter } from "./sniff-delimiter.ts";
import type { SourceRecord } from "./source-record.ts";

/**
 * The records of a data file as text cells, the header first, whatever its format (see
 * SourceReadOptions for `sampleBytes` and `rowStart`, which CSV and TSV ignore).
 */
export function readRecords(
  table: { file: string; format: DataFormat; delimiter: Delimiter; keys?: string[] },
  options: Omit<SourceReadOptions, "keys"> = {},
) {
  const { file, format } = table;
  return format === "csv" || format === "tsv"
    ? parseRecords(file, table.delimiter)
    : readSourceRecords(file, format, { keys: table.keys, ...options });
}

async function* parseRecords(file: string, delimiter: Delimiter): AsyncGenerator<SourceRecord> {
  const source = createReadStream(file);
  const parser = source.pipe(parse({ delimiter, bom: true, skip_empty_lines: true, info: true }));
  try {
    for await (const item of parser as AsyncIterable<{
      record: string[];
      info: { lines: number; bytes: number };
    }>) {
      yield {
        record: item.record,
        line: item.info.lines,
        bytesRead: source.bytesRead,
        endByte: item.info.bytes,
      };
    }
  } catch (error) {
    throw csvProblem(file, error);
  } finally {
    source.destroy();
    parser.destroy();
  }
}

function csvProblem(file: string, error: unknown): CsvInputError {
  if (CsvInputError.isInstance(error)) return error;
  if (error instanceof CsvError) {
    const line = typeof error.lines === "number" ? error.lines : undefined;
    switch (error.code) {
      case "CSV_RECORD_INCONSISTENT_FIELDS_LENGTH": {
        const match = /expect (\d+), got (\d+)/.exec(error.message);
        const counts = match
          ? `the row has ${match[2]} fields but the header has ${match[1]}`
          : "the row has a different number of fields from the header";
        return new CsvInputError({
          file,
          line,
          problem: `${counts}; every row needs one field per column (quote fields that contain the delimiter)`,
          cause: error,
        });
      }
      case "CSV_QUOTE_NOT_CLOSED":
        return new CsvInputError({
          file,
          line,
          problem: "a quoted field is never closed (a missing closing quote)",
          cause: error,
        });
      default:
        return new CsvInputError({ file, line, problem: `malformed CSV: ${error.message}`, cause: error });
    }
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return new CsvInputError({ file, problem: "no such file", cause: error });
  return new CsvInputError({ file, problem: `cannot read it: ${(error as Error).message}`, cause: error });
}
