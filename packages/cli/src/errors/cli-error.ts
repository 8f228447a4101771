const marker: unique symbol = Symbol.for("codeaction.cli.error") as never;

/**
 * The base of every error the command line throws on purpose: a stable `code`, the process
 * `exitCode` it ends with (2 for usage, 1 for failures) and an ES2022 `cause`. Its message is
 * the one line the user sees.
 */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: number;
  readonly [marker] = true;

  constructor(options: { code: string; message: string; exitCode?: number; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.code = options.code;
    this.exitCode = options.exitCode ?? 1;
  }

  static isInstance(error: unknown): error is CliError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}
