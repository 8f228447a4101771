import { redactSecrets } from "../redact.ts";
import type { ToolCallRecord } from "../types.ts";

/** Characters of a tool call's arguments or result kept in a run_program reply; longer ones become a preview. */
const previewCharacters = 2000;

/**
 * One tool call as run_program's structured content reports it: without its bridge id, its error
 * redacted (a wrapped server's URL or token stays out of the reply), its duration in whole
 * milliseconds, and arguments or a result over 2000 characters of JSON as a preview and their size.
 */
export function clientToolCall(call: ToolCallRecord) {
  const { id: _id, result, ...rest } = call;
  const kept = {
    ...rest,
    durationMs: Math.round(rest.durationMs),
    ...(rest.error === undefined ? {} : { error: redactSecrets(rest.error) }),
  };
  const resultJson = result === undefined ? undefined : (JSON.stringify(result) ?? String(result));
  const withResult =
    resultJson === undefined
      ? kept
      : resultJson.length <= previewCharacters
        ? { ...kept, result }
        : {
            ...kept,
            resultPreview: resultJson.slice(0, previewCharacters),
            resultCharacters: resultJson.length,
          };
  const argsJson = JSON.stringify(withResult.args) ?? "null";
  return argsJson.length > previewCharacters
    ? { ...withResult, args: `${argsJson.slice(0, previewCharacters)}... (${argsJson.length} characters)` }
    : withResult;
}
