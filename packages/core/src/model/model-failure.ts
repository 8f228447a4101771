// A failed model call, by cause: what the provider's client threw (an HTTP status, a refused or
// unreachable server, a timeout) sorted into one cause each, for ModelCallError's message, the
// command's messages and retries, and the desk's cards.

/** The longest wait a provider's Retry-After is followed for (a longer one is cut to this). */
export const maximumRetryAfterMs = 60_000;

/**
 * The wait a provider asked for with `Retry-After` (seconds, or an HTTP date), at most
 * `maximumRetryAfterMs`; undefined when the error carries none.
 */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  const headers = (error as { headers?: unknown } | undefined)?.headers;
  let value: unknown;
  if (headers && typeof (headers as Headers).get === "function")
    value = (headers as Headers).get("retry-after");
  else if (headers && typeof headers === "object")
    value = (headers as Record<string, unknown>)["retry-after"];
  if (typeof value !== "string" || value.trim() === "") return undefined;
  const seconds = Number(value);
  const milliseconds = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(milliseconds)) return undefined;
  return Math.min(Math.max(Math.round(milliseconds), 0), maximumRetryAfterMs);
}

/** The HTTP status a provider's error carries, when it has one. */
export function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? status : undefined;
}

const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EAI_AGAIN",
  "EPIPE",
  "ENOTFOUND",
]);

/** The errors from `error` down its causes (at most 5). */
function chain(error: unknown): Error[] {
  const errors: Error[] = [];
  for (let current = error; current instanceof Error && errors.length < 5; current = current.cause) {
    errors.push(current);
  }
  return errors;
}

/** Whether the call ended because the model did not answer in time (the client's timeout). */
export function isTimeout(error: unknown): boolean {
  return chain(error).some(
    (current) =>
      current.name === "TimeoutError" ||
      /Timeout/.test(current.constructor.name) ||
      /^Request timed out/.test(current.message),
  );
}

/** The network error code under a call that reached no server (ECONNREFUSED, ENOTFOUND, ...). */
export function connectionFailure(error: unknown): string | undefined {
  const errors = chain(error);
  // fetch's "fetch failed" holds the socket's error, or an AggregateError of one per address tried.
  const inner = errors.flatMap((current) => [current, ...((current as { errors?: unknown[] }).errors ?? [])]);
  for (const current of inner) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && connectionCodes.has(code)) return code;
  }
  const connection = errors.some(
    (current) => /Connection/.test(current.constructor.name) && !isTimeout(current),
  );
  return connection ? "no connection" : undefined;
}

/**
 * Whether another try may go better: an HTTP 408, 409, 429 or 5xx, or no answer at all (a refused
 * or reset connection, a timeout). A 400, 401, 403 or 404 would fail the same way again.
 */
export function isRetryable(error: unknown): boolean {
  const status = httpStatus(error);
  if (status !== undefined) return status === 408 || status === 409 || status === 429 || status >= 500;
  return isTimeout(error) || connectionFailure(error) !== undefined;
}

/** The provider's message: its first line, without LangChain's troubleshooting link, at most 160 characters. */
export function providerText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = (text.replace(/\s*Troubleshooting URL: \S+/g, "").split("\n")[0] ?? "")
    .trim()
    .replace(/\.+$/, "");
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

/** What a failed model call came to, by cause: one message each, in the library, the command and the desk. */
export type ModelFailureCause =
  | { cause: "timeout" }
  | { cause: "key"; status: number }
  | { cause: "model-name"; status: number }
  | { cause: "rate-limit"; status: number }
  | { cause: "provider"; status: number }
  | { cause: "unreachable"; code: string }
  | { cause: "other"; status?: number };

/** The cause of a failed call: `error` is what the provider's client threw, `status` its HTTP status. */
export function modelFailureCause(error: unknown, status: number | undefined): ModelFailureCause {
  if (isTimeout(error)) return { cause: "timeout" };
  if (status === 401 || status === 403) return { cause: "key", status };
  if (status === 404) return { cause: "model-name", status };
  if (status === 429) return { cause: "rate-limit", status };
  if (status !== undefined && status >= 500) return { cause: "provider", status };
  const unreachable = connectionFailure(error);
  if (unreachable !== undefined) return { cause: "unreachable", code: unreachable };
  return status === undefined ? { cause: "other" } : { cause: "other", status };
}
