import { type ModelFailureCause, modelFailureCause, providerText } from "../model/model-failure.ts";
import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "model-call";
const marker = "codeaction.core.model-call-error";
const symbol = Symbol.for(marker);

/**
 * The model call failed (an HTTP 401, 429 or 500, a timeout, a refused request). Carries the run
 * id, the attempts so far, the provider's own error as `cause` and what it came to (`failure`: the
 * key, the model's name, the rate limit, the provider, no server reached, no answer in time), and
 * says that cause with its fix. Nothing here retries: wrap the model in `withRetry()` for that.
 */
export class ModelCallError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  readonly attempts: Attempt[];
  /** The HTTP status the provider answered with, when it gave one. */
  readonly status?: number;
  /** What the failure came to, by cause (modelFailureCause). */
  readonly failure: ModelFailureCause;

  constructor(options: { runId: string; attempts: Attempt[]; cause: unknown }) {
    const given = (options.cause as { status?: unknown } | undefined)?.status;
    const status = typeof given === "number" ? given : undefined;
    const failure = modelFailureCause(options.cause, status);
    super(
      `The model call of run ${options.runId} failed: ${causeText(failure, providerText(options.cause))}`,
      {
        code,
        cause: options.cause,
      },
    );
    this.name = "ModelCallError";
    this.runId = options.runId;
    this.attempts = options.attempts;
    this.failure = failure;
    if (status !== undefined) this.status = status;
  }

  static override isInstance(error: unknown): error is ModelCallError {
    return CodeActionError.hasMarker(error, marker);
  }
}

const retryHint = "to retry, wrap the model in withRetry()";

/** One sentence per cause, with the provider's own words and the fix a library user has. */
function causeText(failure: ModelFailureCause, said: string): string {
  switch (failure.cause) {
    case "timeout":
      return `the model did not answer in time (${said}). Give it longer with buildAgent's modelTimeout (seconds; default 90), check that its server answers, or ${retryHint}.`;
    case "key":
      return `the model's server refused the key (HTTP ${failure.status}): ${said}. Check the API key the model was made with (OPENAI_API_KEY, or the provider's own).`;
    case "model-name":
      return `the model's server does not know the model (HTTP 404): ${said}. Check the model's name, and the base URL when it points at another server.`;
    case "rate-limit":
      return `the model's server is limiting the rate of requests (HTTP 429): ${said}. Wait and try again, or ${retryHint} (it waits between tries).`;
    case "provider":
      return `the model's provider failed (HTTP ${failure.status}): ${said}. It may be busy or down: try again later, or ${retryHint}.`;
    case "unreachable":
      return `no server answered for the model (${failure.code}): ${said}. Check the model's base URL (OPENAI_BASE_URL for an OpenAI-compatible server) and that this machine reaches it.`;
    default:
      return `${failure.status === undefined ? "" : `HTTP ${failure.status}: `}${said}. Check the model's key and name; ${retryHint}.`;
  }
}
