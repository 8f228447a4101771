/**
 * A lower bound of the bytes of a tool value's JSON as encodeToolValue writes it, found without
 * writing it: every string counts its length plus its quotes (each UTF-16 unit is at least one
 * byte of UTF-8, and escaping only adds), every other item at least one byte. The walk stops as
 * soon as the bound passes `limit`, so a result far over the bridge's limit is refused after a
 * look at its sizes, without the host encoding (and holding) a second copy of it. For a string
 * of ASCII text without escapes the bound is exact.
 */
export function jsonBytesAtLeast(value: unknown, limit: number): number {
  const walk = { total: 0, limit, seen: new Set<object>() };
  addValue(value, walk, 0);
  return walk.total;
}

type Walk = { total: number; limit: number; seen: Set<object> };

/** Past this depth encodeToolValue refuses the value; the walk stops counting there. */
const deepest = 100;

function addValue(value: unknown, walk: Walk, depth: number): void {
  if (walk.total > walk.limit) return;
  if (typeof value === "string") walk.total += value.length + 2;
  else if (value === null || typeof value !== "object") walk.total += 1;
  else if (!walk.seen.has(value) && depth <= deepest) {
    walk.seen.add(value); // a cycle: counted once (encodeToolValue refuses it anyway)
    addObject(value, walk, depth);
  }
}

function addObject(object: object, walk: Walk, depth: number): void {
  const bytes = byteLengthOf(object);
  if (bytes !== undefined) {
    walk.total += Math.ceil(bytes / 3) * 4 + 2; // base64 in quotes
    return;
  }
  if (ArrayBuffer.isView(object)) {
    walk.total += 2 + 2 * (object as unknown as { length: number }).length - 1; // numbers and commas
    return;
  }
  // Brackets or quotes at least; an object with toJSON() (a Date too) is what toJSON returns, and
  // a class instance is refused by encodeToolValue: neither is looked into.
  walk.total += 2;
  if (typeof (object as { toJSON?: unknown }).toJSON === "function") return;
  if (Array.isArray(object) || object instanceof Set) {
    let index = 0;
    for (const item of object) {
      if (walk.total > walk.limit) return;
      if (index++ > 0) walk.total += 1; // the comma
      addValue(item, walk, depth + 1);
    }
  } else if (object instanceof Map) {
    for (const [key, item] of object) {
      if (walk.total > walk.limit) return;
      addValue(key, walk, depth + 1);
      addValue(item, walk, depth + 1);
    }
  } else if (isPlainObject(object)) {
    for (const key in object) {
      if (walk.total > walk.limit) return;
      if (!Object.hasOwn(object, key)) continue;
      walk.total += key.length + 3; // its quotes and the colon (commas not counted)
      addValue((object as Record<string, unknown>)[key], walk, depth + 1);
    }
  }
}

function byteLengthOf(object: object): number | undefined {
  if (object instanceof ArrayBuffer) return object.byteLength;
  if (object instanceof Uint8Array || object instanceof DataView) return object.byteLength;
  return undefined;
}

function isPlainObject(object: object): boolean {
  const prototype = Object.getPrototypeOf(object);
  return prototype === Object.prototype || prototype === null;
}
