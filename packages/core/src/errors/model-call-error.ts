import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "model-call";
const marker = "codeaction.core.model-call-error";
const symbol = Symbol.for(marker);

/**
 * The model call failed (an HTTP 401, 429 or 500, a timeout, a refused request). Carries the run
 * id, the attempts so far and the provider's own error as `cause`. Nothing here retries: wrap the
 * model in `withRetry()` for that.
 */
export class ModelCallError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  readonly attempts: Attempt[];
  /** The HTTP status the provider answered with, when it gave one. */
  readonly status?: number;

  constructor(options: { runId: string; attempts: Attempt[]; cause: unknown }) {
    const provider = options.cause instanceof Error ? options.cause.message : String(options.cause);
    const status = (options.cause as { status?: unknown } | undefined)?.status;
    super(
      `The model call of run ${options.runId} failed${typeof status === "number" ? ` (HTTP ${status})` : ""}: ${provider}. Check the model's key and name; to retry, wrap the model in withRetry().`,
      { code, cause: options.cause },
    );
    this.name = "ModelCallError";
    this.runId = options.runId;
    this.attempts = options.attempts;
    if (typeof status === "number") this.status = status;
  }

  static override isInstance(error: unknown): error is ModelCallError {
    return CodeActionError.hasMarker(error, marker);
  }
}
