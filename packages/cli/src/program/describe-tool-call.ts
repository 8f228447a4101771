import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";

/** Characters of arguments or of a result shown on one line; the rest is counted, not shown. */
export const previewCharacters = 200;

/** A value's JSON on one line, cut to `limit` characters with the full size named, safe for a terminal. */
export function previewJson(value: unknown, limit = previewCharacters): string {
  const json = typeof value === "string" ? JSON.stringify(value) : (JSON.stringify(value) ?? "None");
  const shown = json.length > limit ? `${json.slice(0, limit)}... (${json.length} characters)` : json;
  return escapeForTerminal(shown, { keepNewlines: false });
}

/**
 * One line per finished tool call, as `codeaction run` prints it:
 * `[tool] get-sum {"a":1,"b":2} -> ok in 3 ms: 3`.
 */
export function describeToolCall(call: {
  tool: string;
  args: unknown;
  status: string;
  durationMs: number;
  result?: unknown;
  error?: string;
}): string {
  const name = escapeForTerminal(call.tool, { keepNewlines: false });
  const outcome =
    call.status === "ok"
      ? previewJson(call.result ?? null)
      : escapeForTerminal(cut(call.error ?? "", previewCharacters * 2), { keepNewlines: false });
  return `[tool] ${name} ${previewJson(call.args)} -> ${call.status} in ${Math.round(call.durationMs)} ms: ${outcome}`;
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}... (${text.length} characters)` : text;
}
