/** Every `code` an error of this package carries: match on it (or on `isInstance`), not on messages. */
export type CodeActionErrorCode =
  | "aborted"
  | "attempts-exhausted"
  | "config"
  | "data-file"
  | "disagreement"
  | "max-iterations"
  | "mcp-server"
  | "mcp-tool"
  | "model-call"
  | "sandbox-run"
  | "sandbox-unavailable"
  | "scripted-replies-exhausted"
  | "tool-calling-unsupported"
  | "tool-input-invalid"
  | "tool-value-unmappable";

const marker: unique symbol = Symbol.for("codeaction.core.error") as never;

/**
 * The base of every error @codeaction/core throws: a stable `code` string and an ES2022 `cause`.
 * `CodeActionError.isInstance(error)` works across duplicated copies of the package.
 */
export class CodeActionError extends Error {
  readonly code: CodeActionErrorCode;
  readonly [marker] = true;

  constructor(options: { code: CodeActionErrorCode; message: string; cause?: unknown }) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CodeActionError";
    this.code = options.code;
  }

  static isInstance(error: unknown): error is CodeActionError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

/** Builds the `isInstance` check of a subclass: the base marker plus the subclass's code. */
export function hasCode(error: unknown, code: CodeActionErrorCode): boolean {
  return CodeActionError.isInstance(error) && error.code === code;
}
