import {
  isRetryableModelFailure,
  ModelCallError,
  maximumRetryAfterMs,
  modelFailureCause,
  modelRetryAfterMs,
  providerMessage,
} from "@codeaction/core";
import { CliError } from "./errors/cli-error.ts";

// The causes are core's (modelFailureCause): the library's ModelCallError, the command and the desk
// sort a failed call the same way; the command words each with its own options as the fix.
export { isRetryableModelFailure as isRetryable, modelRetryAfterMs as retryAfterMs };

/** The HTTP status a provider's error carries, when it has one. */
function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

/** One failed model call that is about to be tried again. */
export type ModelRetryNotice = {
  error: unknown;
  /** This retry's number, from 1. */
  retry: number;
  retries: number;
  delayMs: number;
};

/** What a failed model call is explained with: the tries it had, its timeout, where it went. */
export type ModelCallSettings = {
  retries: number;
  /** Seconds one call may take (--model-timeout). */
  timeoutSeconds: number;
  /** Where the calls went, for messages: the base URL (redacted) or the provider's API. */
  place: string;
  /** The model's name as given (--model), for a 404. */
  model?: string;
};

/** The wait before retry `retry` (from 1): 1 s, 2 s, 4 s, ... at most 30 s. */
export function retryDelayMs(retry: number): number {
  return Math.min(1000 * 2 ** (retry - 1), 30_000);
}

/** "the model answered HTTP 500; retry 2 of 3 in 4 s", for the progress lines. */
export function describeRetry(notice: ModelRetryNotice): string {
  const status = httpStatus(notice.error);
  const what =
    modelFailureCause(notice.error, status).cause === "timeout"
      ? "the model did not answer in time"
      : status === undefined
        ? `the model could not be reached (${providerMessage(notice.error)})`
        : `the model answered HTTP ${status}${status === 429 && modelRetryAfterMs(notice.error) !== undefined ? " with Retry-After" : ""}`;
  return `${what}; retry ${notice.retry} of ${notice.retries} in ${Math.round(notice.delayMs / 1000)} s`;
}

/**
 * A failed model call said for the command line, one message per cause: the key (401, 403), the
 * model's name (404), the rate limit (429), the provider (5xx), no server reached (the base URL
 * tried), no answer in time; each with the command's own options as the fix (the library's hint
 * names withRetry(), which a command-line user cannot reach). Any other error is returned as it is.
 */
export function explainModelFailure(error: unknown, settings: ModelCallSettings): unknown {
  if (!ModelCallError.isInstance(error)) return error;
  return new CliError(modelFailureMessage(error, settings), { code: "model-call", cause: error });
}

/** Core's ModelCallError along `error`'s causes (at most 8 deep); undefined when there is none. */
export function modelCallFailure(error: unknown): ModelCallError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    if (ModelCallError.isInstance(current)) return current;
    current = current.cause;
  }
  return undefined;
}

/** "tried once" or "tried 3 times", for a message (the command adds its option). */
export function triesText(retries: number): string {
  return retries === 0 ? "tried once" : `tried ${retries + 1} times`;
}

function modelFailureMessage(error: ModelCallError, settings: ModelCallSettings): string {
  const { place, retries } = settings;
  const said = providerMessage(error.cause ?? error);
  const tries = `${triesText(retries)} (--retries ${retries})`;
  const found = error.failure;
  switch (found.cause) {
    case "timeout":
      return `The model at ${place} did not answer within ${settings.timeoutSeconds} s, ${tries}. Give it longer with --model-timeout SECONDS, or check that the server there answers.`;
    case "key":
      return `The model at ${place} refused the key (HTTP ${found.status}): ${said}. Check the key (OPENAI_API_KEY, or the provider's own variable): it must be one this server accepts.`;
    case "model-name": {
      const model = settings.model ? ` ${settings.model}` : "";
      return `The model at ${place} does not know the model${model} (HTTP 404): ${said}. Check --model, and that OPENAI_BASE_URL points at the server that has it.`;
    }
    case "rate-limit":
      return `The model at ${place} is limiting the rate of requests (HTTP 429), ${tries}, each retry after the wait its Retry-After asked for (at most ${maximumRetryAfterMs / 1000} s): ${said}. Wait and try again, or give it more tries with --retries N.`;
    case "provider":
      return `The provider at ${place} failed (HTTP ${found.status}), ${tries}: ${said}. The provider may be busy or down: try again later, or give it more tries with --retries N.`;
    case "unreachable":
      return `Could not reach the model at ${place} (${found.code}), ${tries}. Check that a server answers there (OPENAI_BASE_URL for an OpenAI-compatible one) and that this machine reaches it.`;
    default: {
      const answered = found.status === undefined ? "" : ` (HTTP ${found.status})`;
      return `The model call to ${place} failed${answered}: ${said}. Check the model's key (OPENAI_API_KEY or the provider's), OPENAI_BASE_URL and --model.`;
    }
  }
}
