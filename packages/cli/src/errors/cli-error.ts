import { BrandedError } from "@codeaction/sandbox/internal";

/** Every `code` an error of the command line carries: match on it (or on `isInstance`), not on messages. */
export type CliErrorCode =
  | "csv-input"
  | "interrupted"
  | "journal"
  | "model-call"
  | "model-missing"
  | "module-invalid"
  | "program-missing"
  | "replay-invalid"
  | "replay-missing"
  | "resume-secret"
  | "resume-state"
  | "resume-taken"
  | "usage";

const marker = "codeaction.cli.error";
const symbol = Symbol.for(marker);

/**
 * The base of every error the command line throws on purpose: a stable `code`, the process
 * `exitCode` it ends with (2 for usage, 1 for failures) and an ES2022 `cause`; `isInstance` checks a
 * `Symbol.for` brand (one per class; BrandedError's check). Its message is the one line the user sees.
 */
export class CliError extends BrandedError<CliErrorCode> {
  readonly exitCode: number;
  protected readonly [symbol] = true;

  constructor(message: string, options: { code: CliErrorCode; exitCode?: number; cause?: unknown }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = options.exitCode ?? 1;
  }

  static isInstance(error: unknown): error is CliError {
    return CliError.hasMarker(error, marker);
  }
}
