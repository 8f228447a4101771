import { CliError } from "./errors/cli-error.ts";

/** One failed model call that is about to be tried again. */
export type ModelRetryNotice = {
  error: unknown;
  /** This retry's number, from 1. */
  retry: number;
  retries: number;
  delayMs: number;
};

/** The wait before retry `retry` (from 1): 1 s, 2 s, 4 s, ... at most 30 s. */
export function retryDelayMs(retry: number): number {
  return Math.min(1000 * 2 ** (retry - 1), 30_000);
}

/** The HTTP status a provider's error carries, when it has one. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

const connectionCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "EPIPE"]);

/**
 * Whether another try may go better: an HTTP 408, 409, 429 or 5xx, or no answer at all (a refused
 * or reset connection, a timeout). A 400, 401, 403 or 404 would fail the same way again.
 */
export function isRetryable(error: unknown): boolean {
  const status = httpStatus(error);
  if (status !== undefined) return status === 408 || status === 409 || status === 429 || status >= 500;
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && connectionCodes.has(code)) return true;
    if (/Connection|Timeout/.test(current.constructor.name)) return true;
    current = current.cause;
  }
  return false;
}

/** "the model answered HTTP 500; retry 2 of 3 in 4 s", for the progress lines. */
export function describeRetry(notice: ModelRetryNotice): string {
  const status = httpStatus(notice.error);
  const what =
    status === undefined
      ? `the model could not be reached (${firstLine(notice.error)})`
      : `the model answered HTTP ${status}`;
  return `${what}; retry ${notice.retry} of ${notice.retries} in ${Math.round(notice.delayMs / 1000)} s`;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

/**
 * A failed model call said for the command line: what the provider answered, how many tries it
 * had, and what to do with the command's own options (the library's own hint names withRetry(),
 * which a command-line user cannot reach). Any other error is returned as it is.
 */
export function explainModelFailure(error: unknown, retries: number): unknown {
  const isModelCall = (error as { code?: unknown } | undefined)?.code === "model-call";
  if (!isModelCall || !(error instanceof Error) || CliError.isInstance(error)) return error;
  const cause = error.cause ?? error;
  const status = httpStatus(cause) ?? httpStatus(error);
  const provider = (cause instanceof Error ? cause.message : String(cause))
    .split("\n")[0]
    ?.trim()
    .replace(/\.$/, "");
  const answered = status === undefined ? "" : ` (HTTP ${status})`;
  if (!isRetryable(cause)) {
    return new CliError(
      `The model call failed${answered}: ${provider}. Check the model's key (OPENAI_API_KEY or the provider's), OPENAI_BASE_URL and --model.`,
      { code: "model-call", cause: error },
    );
  }
  const tries = retries === 0 ? "once (--retries 0)" : `${retries + 1} times (--retries ${retries})`;
  return new CliError(
    `The model call failed${answered}, tried ${tries}: ${provider}. The provider may be busy or down: try again later, or give it more tries with --retries N.`,
    { code: "model-call", cause: error },
  );
}
