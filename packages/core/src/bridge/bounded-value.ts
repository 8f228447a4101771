/**
 * What a run's records and events keep of a tool call's arguments and result. The values come from
 * a hostile program (arguments) or from tools that may return anything (results), and a run may
 * make many calls, so the host keeps a value whole only when its JSON is small, and a preview and
 * its size otherwise.
 */

/** A value whose JSON is longer than this is kept as a preview of this many characters and its size. */
export const previewCharacters = 2000;

/**
 * What a record keeps of one value: the value itself, or the start of its JSON and its size in bytes
 * (with `length`, the number of items of a list or of keys of a dict, so a summary can still say it).
 */
export type KeptValue = { value: unknown } | { preview: string; bytes: number; length?: number };

/**
 * Keeps `value` whole when `json` (its JSON text) is at most `previewCharacters` long, else a
 * preview and the size in bytes. Pass `json` when it is already known, to serialize only once.
 */
export function keepValue(value: unknown, json: string | undefined = safeJson(value)): KeptValue {
  if (json === undefined || json.length <= previewCharacters) return { value };
  const preview = json.slice(0, previewCharacters);
  const bytes = Buffer.byteLength(json);
  const length = Array.isArray(value)
    ? value.length
    : value !== null && typeof value === "object"
      ? Object.keys(value).length
      : undefined;
  return length === undefined ? { preview, bytes } : { preview, bytes, length };
}

/** A message cut to `previewCharacters`, saying how long it was. */
export function keepMessage(message: string): string {
  if (message.length <= previewCharacters) return message;
  return `${message.slice(0, previewCharacters)} [... ${message.length - previewCharacters} more characters]`;
}

/** Characters a kept value holds on the host (what counts against a run's record budget). */
export function keptCharacters(kept: KeptValue): number {
  return "preview" in kept ? kept.preview.length : (safeJson(kept.value)?.length ?? 0);
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
