import type { Attempt, ToolCallRecord } from "../types.ts";
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
  /**
   * Every tool call that ended before the abort, in order: the tools pattern's calls, or the calls of
   * code-action's attempts.
   */
  readonly toolCalls: ToolCallRecord[];

  constructor(options: {
    runId: string;
    attempts: Attempt[];
    toolCalls?: ToolCallRecord[];
    cause?: unknown;
  }) {
    const reason =
      options.cause instanceof Error ? options.cause.message : options.cause ? String(options.cause) : "";
    const toolCalls = options.toolCalls ?? options.attempts.flatMap((attempt) => attempt.toolCalls);
    const progress =
      options.toolCalls === undefined
        ? `${options.attempts.length} attempt(s)`
        : `${options.toolCalls.length} tool call(s)`;
    super(`Run ${options.runId} was aborted after ${progress}${reason ? `: ${reason}` : ""}.`, {
      code,
      cause: options.cause,
    });
    this.name = "AbortError";
    this.runId = options.runId;
    this.attempts = options.attempts;
    this.toolCalls = toolCalls;
  }

  static override isInstance(error: unknown): error is AbortError {
    return CodeActionError.hasMarker(error, marker);
  }
}
