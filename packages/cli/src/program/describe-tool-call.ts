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
  /** The start of the arguments' JSON, when the bridge kept only that. */
  argsPreview?: string;
  status: string;
  durationMs: number;
  result?: unknown;
  /** The start of the result's JSON and its size, when the bridge kept only that. */
  resultPreview?: string;
  resultBytes?: number;
  error?: string;
}): string {
  const name = escapeForTerminal(call.tool, { keepNewlines: false });
  const args = call.argsPreview === undefined ? previewJson(call.args) : cutPreview(call.argsPreview);
  let outcome: string;
  if (call.status !== "ok")
    outcome = escapeForTerminal(cut(call.error ?? "", previewCharacters * 2), { keepNewlines: false });
  else if (call.result === undefined && call.resultPreview !== undefined)
    outcome = cutPreview(call.resultPreview, call.resultBytes);
  else outcome = previewJson(call.result ?? null);
  return `[tool] ${name} ${args} -> ${call.status} in ${Math.round(call.durationMs)} ms: ${outcome}`;
}

/** A JSON preview the bridge already cut, cut again to one line's worth, with the full size when known. */
function cutPreview(preview: string, bytes?: number): string {
  const size = bytes === undefined ? "" : ` (${bytes} bytes)`;
  return escapeForTerminal(`${preview.slice(0, previewCharacters)}...${size}`, { keepNewlines: false });
}

function cut(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}... (${text.length} characters)` : text;
}
