/**
 * What a run's records and events keep of a tool call's arguments and result. The values come from
 * a hostile program (arguments) or from tools that may return anything (results), and a run may
 * make many calls, so the host keeps a value whole only when its JSON is small, and a preview and
 * its size otherwise. A preview is written from the value itself and stops at its length: the whole
 * JSON of a large value is never built just to be cut (and a cut string would keep it alive).
 */

/** A value whose JSON is longer than this is kept as a preview of this many characters and its size. */
export const previewCharacters = 2000;

/**
 * What a record keeps of one value: the value itself, or the start of its JSON and its size in bytes
 * when known (with `length`, the number of items of a list or of keys of a dict, so a summary can
 * still say it).
 */
export type KeptValue = { value: unknown } | { preview: string; bytes?: number; length?: number };

/**
 * Keeps `value` whole when its JSON is at most `previewCharacters` long, else a preview and `bytes`
 * (the size of its JSON, when the caller knows it).
 */
export function keepValue(value: unknown, bytes?: number): KeptValue {
  const start = jsonStart(value, previewCharacters);
  if (start.complete) return { value };
  const preview = start.text.slice(0, previewCharacters);
  const length = Array.isArray(value)
    ? value.length
    : value !== null && typeof value === "object"
      ? countKeys(value)
      : undefined;
  return {
    preview,
    ...(bytes === undefined ? {} : { bytes }),
    ...(length === undefined ? {} : { length }),
  };
}

/** A message cut to `previewCharacters`, saying how long it was; a copy, never a view of a long one. */
export function keepMessage(message: string): string {
  if (message.length <= previewCharacters) return message;
  const cut = Buffer.from(message.slice(0, previewCharacters)).toString();
  return `${cut} [... ${message.length - previewCharacters} more characters]`;
}

/** Characters a kept value holds on the host (what counts against a run's record budget). */
export function keptCharacters(kept: KeptValue): number {
  return "preview" in kept ? kept.preview.length : jsonStart(kept.value, previewCharacters).text.length;
}

/** The record fields for a kept value: `name` whole, or `namePreview` and (for results) `nameBytes` and `nameLength`. */
export function keptFields(kept: KeptValue | undefined, name: "args" | "result"): Record<string, unknown> {
  if (kept === undefined) return {};
  if ("value" in kept) return { [name]: kept.value };
  if (name === "args") return { argsPreview: kept.preview };
  return {
    resultPreview: kept.preview,
    ...(kept.bytes === undefined ? {} : { resultBytes: kept.bytes }),
    ...(kept.length === undefined ? {} : { resultLength: kept.length }),
  };
}

type Writer = { parts: string[]; length: number; room: number };

/**
 * The start of `value`'s JSON (as JSON.stringify writes it): whole when it is at most `limit`
 * characters (`complete`), else cut a little past `limit`. Work and memory are bounded by `limit`,
 * not by the value's size.
 */
export function jsonStart(value: unknown, limit: number): { text: string; complete: boolean } {
  const writer: Writer = { parts: [], length: 0, room: limit + 1 };
  let complete: boolean;
  try {
    complete = writeValue(value, writer, 0) && writer.length <= limit;
  } catch {
    return { text: "", complete: true }; // JSON.stringify would throw (a bigint): kept as it is
  }
  // Joined into a fresh string of at most limit + 1 characters: nothing of the value is kept.
  return { text: writer.parts.join(""), complete };
}

/** Appends `text`, cut to the room left; false once the room is used up. */
function write(writer: Writer, text: string): boolean {
  const left = writer.room - writer.length;
  const kept = text.length > left ? text.slice(0, left) : text;
  writer.parts.push(kept);
  writer.length += kept.length;
  return text.length <= left;
}

function writeValue(value: unknown, writer: Writer, depth: number): boolean {
  if (value !== null && typeof value === "object") {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return writeValue(toJSON.call(value), writer, depth);
    if (depth > 200) {
      write(writer, "[... nested too deep]");
      return false;
    }
    return Array.isArray(value) ? writeArray(value, writer, depth) : writeObject(value, writer, depth);
  }
  if (typeof value === "string") return writeString(writer, value);
  return write(writer, JSON.stringify(value) ?? "null");
}

/** A string's JSON; escaping never shortens it, so only the room left of it is encoded. */
function writeString(writer: Writer, value: string): boolean {
  const left = writer.room - writer.length;
  if (value.length <= left) return write(writer, JSON.stringify(value));
  write(writer, JSON.stringify(value.slice(0, left)));
  return false;
}

function writeArray(items: unknown[], writer: Writer, depth: number): boolean {
  if (!write(writer, "[")) return false;
  for (let index = 0; index < items.length; index += 1) {
    if (index > 0 && !write(writer, ",")) return false;
    if (!writeValue(items[index], writer, depth + 1)) return false;
  }
  return write(writer, "]");
}

function writeObject(object: object, writer: Writer, depth: number): boolean {
  if (!write(writer, "{")) return false;
  let first = true;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const item = (object as Record<string, unknown>)[key];
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    if (!first && !write(writer, ",")) return false;
    first = false;
    if (!writeString(writer, key) || !write(writer, ":") || !writeValue(item, writer, depth + 1))
      return false;
  }
  return write(writer, "}");
}

function countKeys(object: object): number {
  let count = 0;
  for (const key in object) if (Object.hasOwn(object, key)) count += 1;
  return count;
}
