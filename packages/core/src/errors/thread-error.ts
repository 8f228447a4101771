import { CodeActionError } from "./code-action-error.ts";

const code = "thread";
const marker = "codeaction.core.thread-error";
const symbol = Symbol.for(marker);

/** Why a thread could not be used: no thread_id, a stored history refused, an unknown thread. */
export type ThreadErrorReason =
  | "no-thread-id"
  | "invalid-thread-id"
  | "history-refused"
  | "unknown-thread"
  | "closed";

/**
 * A run with codeAction.state "thread" could not use its thread: the invocation named none
 * (`configurable.thread_id`), the thread store's history for it failed its signature or checks,
 * or a fork named a thread that does not exist. `reason` says which; the message says the fix.
 */
export class ThreadError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly reason: ThreadErrorReason;
  readonly threadId: string | undefined;

  constructor(options: { reason: ThreadErrorReason; message: string; threadId?: string; cause?: unknown }) {
    super(options.message, { code, ...(options.cause === undefined ? {} : { cause: options.cause }) });
    this.name = "ThreadError";
    this.reason = options.reason;
    this.threadId = options.threadId;
  }

  static override isInstance(error: unknown): error is ThreadError {
    return CodeActionError.hasMarker(error, marker);
  }
}
