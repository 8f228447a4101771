import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "aborted";
const marker = "codeaction.core.abort-error";
const symbol = Symbol.for(marker);

/**
 * A turn was cancelled: its `signal` aborted, or its `stream()` was left early. By the time this is
 * thrown the turn's containers are removed and its tool calls settled. `name` is "AbortError", as
 * for `fetch` and `AbortSignal.throwIfAborted()`; `cause` is the signal's reason.
 */
export class AbortError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  /** Code-action: the attempts that ended before the abort (the interrupted one included). */
  readonly attempts: Attempt[];

  constructor(options: { runId: string; attempts: Attempt[]; cause?: unknown }) {
    const reason =
      options.cause instanceof Error ? options.cause.message : options.cause ? String(options.cause) : "";
    super(
      `Run ${options.runId} was aborted after ${options.attempts.length} attempt(s)${reason ? `: ${reason}` : ""}.`,
      { code, cause: options.cause },
    );
    this.name = "AbortError";
    this.runId = options.runId;
    this.attempts = options.attempts;
  }

  static override isInstance(error: unknown): error is AbortError {
    return CodeActionError.hasMarker(error, marker);
  }
}
