import { ToolValueError } from "../errors/tool-value-error.ts";

/**
 * What a tool returned, encoded once for both patterns (docs/code-action.md, "Values"):
 *
 * | JavaScript                                   | Python (code-action)   | tools pattern text |
 * | -------------------------------------------- | ---------------------- | ------------------ |
 * | null, undefined                              | None                   | null               |
 * | boolean, string, finite number               | bool, str, int/float   | as JSON            |
 * | NaN, Infinity, -Infinity                     | float                  | NaN, Infinity      |
 * | bigint                                       | int (exact)            | digits             |
 * | Date                                         | str (ISO 8601, UTC)    | "…Z"               |
 * | array, Set, other typed arrays               | list                   | array              |
 * | plain object, Map                            | dict                   | object             |
 * | Buffer, Uint8Array, ArrayBuffer, DataView    | bytes                  | {"base64": …}      |
 * | an object with toJSON()                      | what toJSON returns    |                    |
 *
 * Anything else (a function, a symbol, a class instance without toJSON, a cycle, an invalid Date,
 * nesting past 100 levels) is a ToolValueError naming the tool and the path in the value, never
 * "[object Object]".
 *
 * `text` is the JSON the program's module parses: Python's json accepts NaN/Infinity tokens and
 * integers of any size; bytes and maps with non-string keys travel as tagged objects its
 * object_hook turns back. `record` is a JSON-safe copy for records and events (bigints past 2^53
 * and NaN as strings, bytes as base64).
 */
export type EncodedToolValue = { text: string; record: unknown };

/** The key of a tagged object (bytes, a Map with non-string keys); codeaction_tools decodes it. */
export const taggedValueKey = "\u0000codeaction";
const maxDepth = 100;

export function encodeToolValue(value: unknown, tool: string): EncodedToolValue {
  return encode(value, { tool, path: "result", depth: 0, ancestors: new Set() });
}

type Place = { tool: string; path: string; depth: number; ancestors: Set<object> };

function refuse(place: Place, what: string, fix: string): never {
  throw new ToolValueError({ tool: place.tool, path: place.path, problem: what, fix });
}

function encode(value: unknown, place: Place): EncodedToolValue {
  if (value === null || value === undefined) return { text: "null", record: null };
  switch (typeof value) {
    case "string":
    case "boolean":
      return { text: JSON.stringify(value), record: value };
    case "number":
      if (Number.isFinite(value)) return { text: JSON.stringify(value), record: value };
      return {
        text: Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity",
        record: String(value),
      };
    case "bigint":
      return {
        text: value.toString(),
        record: Number.isSafeInteger(Number(value)) ? Number(value) : String(value),
      };
    case "function":
      return refuse(place, "a function", "return the function's result, not the function");
    case "symbol":
      return refuse(place, "a symbol", "return a string");
  }
  return encodeObject(value as object, place);
}

function encodeObject(object: object, place: Place): EncodedToolValue {
  if (place.ancestors.has(object))
    return refuse(place, "a reference back to an enclosing value (a cycle)", "return a tree");
  if (place.depth >= maxDepth)
    return refuse(place, `a value nested deeper than ${maxDepth} levels`, "return a flatter value");
  if (object instanceof Date) {
    if (Number.isNaN(object.getTime()))
      return refuse(place, "an invalid Date", "return a valid Date or null");
    const iso = object.toISOString();
    return { text: JSON.stringify(iso), record: iso };
  }
  const bytes = bytesOf(object);
  if (bytes) {
    const base64 = bytes.toString("base64");
    return {
      text: `{${JSON.stringify(taggedValueKey)}:"bytes","base64":${JSON.stringify(base64)}}`,
      record: { base64 },
    };
  }
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    const converted: unknown = toJSON.call(object);
    if (converted !== object) return encode(converted, { ...place, depth: place.depth + 1 });
  }
  place.ancestors.add(object);
  try {
    if (Array.isArray(object) || object instanceof Set || isNumberArray(object)) {
      return encodeList([...(object as Iterable<unknown>)], place);
    }
    if (object instanceof Map) return encodeMap(object, place);
    if (isPlainObject(object)) return encodeEntries(Object.entries(object), place);
  } finally {
    place.ancestors.delete(object);
  }
  const kind = object.constructor?.name
    ? `a ${object.constructor.name} instance`
    : "an object with a prototype";
  return refuse(
    place,
    `${kind} with no toJSON()`,
    "return plain objects, or give the class a toJSON() method",
  );
}

function encodeList(items: unknown[], place: Place): EncodedToolValue {
  const parts = items.map((item, index) => encode(item, child(place, `[${index}]`)));
  return { text: `[${parts.map((part) => part.text).join(",")}]`, record: parts.map((part) => part.record) };
}

function encodeEntries(entries: [string, unknown][], place: Place): EncodedToolValue {
  const texts: string[] = [];
  const record: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    const part = encode(item, child(place, pathKey(key)));
    texts.push(`${JSON.stringify(key)}:${part.text}`);
    record[key] = part.record;
  }
  return { text: `{${texts.join(",")}}`, record };
}

/** A Map with string keys is a dict; other keys (numbers, bigints, booleans) travel as pairs. */
function encodeMap(map: Map<unknown, unknown>, place: Place): EncodedToolValue {
  const keys = [...map.keys()];
  if (keys.every((key) => typeof key === "string"))
    return encodeEntries([...map] as [string, unknown][], place);
  const pairs = [...map].map(([key, item], index) => {
    if (key !== null && typeof key === "object") {
      refuse(child(place, `<key ${index}>`), "an object used as a Map key", "use string or number keys");
    }
    return [
      encode(key, child(place, `<key ${index}>`)),
      encode(item, child(place, `[${String(key)}]`)),
    ] as const;
  });
  const text = pairs.map(([key, item]) => `[${key.text},${item.text}]`).join(",");
  const record = Object.fromEntries(pairs.map(([key, item]) => [String(key.record), item.record]));
  return { text: `{${JSON.stringify(taggedValueKey)}:"map","entries":[${text}]}`, record };
}

function child(place: Place, step: string): Place {
  return { ...place, path: `${place.path}${step}`, depth: place.depth + 1 };
}

function pathKey(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function bytesOf(object: object): Buffer | undefined {
  if (Buffer.isBuffer(object)) return object;
  if (object instanceof Uint8Array) return Buffer.from(object.buffer, object.byteOffset, object.byteLength);
  if (object instanceof ArrayBuffer) return Buffer.from(object);
  if (object instanceof DataView) return Buffer.from(object.buffer, object.byteOffset, object.byteLength);
  return undefined;
}

function isNumberArray(object: object): boolean {
  return ArrayBuffer.isView(object) && !(object instanceof DataView);
}

function isPlainObject(object: object): boolean {
  const prototype = Object.getPrototypeOf(object);
  return prototype === Object.prototype || prototype === null;
}
