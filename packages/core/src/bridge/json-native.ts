/**
 * What a tool returned, made into a value JSON carries without loss: JSON-native values stay as they
 * are (nested too), `undefined` becomes null, and anything else becomes its string form (an object
 * with `toJSON`, such as a Date, gives what `toJSON` returns).
 */
export function toJsonNative(value: unknown): unknown {
  return convert(value, 0, new Set());
}

const maxDepth = 100;

function convert(value: unknown, depth: number, ancestors: Set<object>): unknown {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? value : String(value);
    case "bigint":
    case "symbol":
    case "function":
      return String(value);
  }
  const object = value as object;
  if (ancestors.has(object)) return "[Circular]";
  if (depth >= maxDepth) return safeString(object);
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === "function") {
    let converted: unknown;
    try {
      converted = toJSON.call(object);
    } catch {
      return safeString(object);
    }
    if (converted !== object) return convert(converted, depth + 1, ancestors);
  }
  ancestors.add(object);
  try {
    if (Array.isArray(object)) return object.map((item) => convert(item, depth + 1, ancestors));
    if (isPlainObject(object)) {
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(object)) {
        if (item !== undefined) result[key] = convert(item, depth + 1, ancestors);
      }
      return result;
    }
    return safeString(object);
  } finally {
    ancestors.delete(object);
  }
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function safeString(value: object): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
