import { createHash, createHmac } from "node:crypto";

/**
 * The canonical JSON text of a plain JSON value: object keys sorted by code unit, no spaces, numbers
 * and strings as JSON.stringify writes them. Two values that mean the same (keys in another order)
 * have the same text; it is what call arguments are compared by and what a state's signature covers.
 * `undefined` members are left out as JSON.stringify does. Recursive: tool arguments nest at most 64
 * levels (the bridge refuses deeper ones), and states are our own shape.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`;
  }
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(",")}}`;
}

/** The SHA-256 digest of a text's UTF-8 bytes, lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** HMAC-SHA256 of a text's UTF-8 bytes under `key`, lowercase hex. */
export function hmacHex(key: string | Uint8Array, text: string): string {
  return createHmac("sha256", key).update(text).digest("hex");
}
