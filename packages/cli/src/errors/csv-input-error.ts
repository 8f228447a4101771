import { CliError } from "./cli-error.ts";

const marker = "codeaction.cli.csv-input-error";
const symbol = Symbol.for(marker);

/** A CSV given with --csv cannot be used: missing, empty, ragged or malformed. Names the file and the line. */
export class CsvInputError extends CliError {
  protected readonly [symbol] = true;
  readonly file: string;
  readonly line: number | undefined;
  /** What is wrong, without the file and line. */
  readonly problem: string;

  constructor(options: { file: string; problem: string; line?: number; cause?: unknown }) {
    const where = options.line === undefined ? options.file : `${options.file} line ${options.line}`;
    super(`${where}: ${options.problem}`, { code: "csv-input", cause: options.cause });
    this.name = "CsvInputError";
    this.file = options.file;
    this.line = options.line;
    this.problem = options.problem;
  }

  static override isInstance(error: unknown): error is CsvInputError {
    return CliError.hasMarker(error, marker);
  }
}
