import { BrandedError } from "@codeaction/sandbox/internal";

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
  | "step-limit"
  | "thread"
  | "tool-calling-unsupported"
  | "tool-input-invalid"
  | "tool-value-unmappable"
  /** The warm relay a session handed out is not the command the turn needs (spawnRelay's `warmMismatch: "error"`, a test's option). */
  | "warm-mismatch";

const marker = "codeaction.core.error";
const symbol = Symbol.for(marker);

/**
 * The base of every error @codeaction/core throws for its own reasons: a stable `code` (match on
 * it, not on the message), an ES2022 `cause`, and `isInstance`, which checks a `Symbol.for` brand
 * (one per class) instead of the prototype chain, so it works across duplicated copies of the
 * package (the brand check is BrandedError's, shared with the sandbox's and the CLI's errors).
 */
export class CodeActionError extends BrandedError<CodeActionErrorCode> {
  protected readonly [symbol] = true;

  constructor(message: string, options: { code: CodeActionErrorCode; cause?: unknown }) {
    super(message, options);
    this.name = "CodeActionError";
  }

  static isInstance(error: unknown): error is CodeActionError {
    return CodeActionError.hasMarker(error, marker);
  }
}
