/** Every `code` an error of this package carries: match on it (or on `isInstance`), not on messages. */
export type CodeActionErrorCode =
  | "aborted"
  | "attempts-exhausted"
  | "budget-exceeded"
  | "config"
  | "data-file"
  | "disagreement"
  | "interrupt-refused"
  | "max-iterations"
  | "mcp-server"
  | "mcp-tool"
  | "model-call"
  | "replay-diverged"
  | "resume-state"
  | "sandbox-run"
  | "sandbox-unavailable"
  | "scripted-replies-exhausted"
  | "tool-calling-unsupported"
  | "tool-input-invalid"
  | "tool-value-unmappable"
  /** The warm relay a session handed out is not the command the turn needs (CODEACTION_WARM_MISMATCH=error). */
  | "warm-mismatch";

const marker = "codeaction.core.error";
const symbol = Symbol.for(marker);

/**
 * The base of every error @codeaction/core throws for its own reasons, in the sandbox package's
 * convention (SandboxError): a stable `code` (match on it, not on the message), an ES2022 `cause`,
 * and `isInstance`, which checks a `Symbol.for` brand (one per class) instead of the prototype
 * chain, so it works across duplicated copies of the package.
 */
export class CodeActionError extends Error {
  readonly code: CodeActionErrorCode;
  protected readonly [symbol] = true;

  constructor(message: string, options: { code: CodeActionErrorCode; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CodeActionError";
    this.code = options.code;
  }

  static isInstance(error: unknown): error is CodeActionError {
    return CodeActionError.hasMarker(error, marker);
  }

  /** Whether `error` carries the brand `Symbol.for(markerName)`: the check behind every `isInstance`. */
  protected static hasMarker(error: unknown, markerName: string): boolean {
    const brand = Symbol.for(markerName);
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[brand] === true;
  }
}
