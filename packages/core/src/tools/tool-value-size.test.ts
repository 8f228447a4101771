import { describe, expect, it } from "vitest";
import { countedItems } from "../../test/local-relay.ts";
import { encodeToolValue } from "./tool-value.ts";
import { jsonBytesAtLeast } from "./tool-value-size.ts";

const exactBytes = (value: unknown) => Buffer.byteLength(encodeToolValue(value, "t").text);

describe("jsonBytesAtLeast", () => {
  it("never counts more than the encoded JSON holds, and is exact for plain ASCII text", () => {
    const values: unknown[] = [
      null,
      undefined,
      true,
      0,
      -12.5,
      Number.NaN,
      2n ** 70n,
      "",
      "plain",
      'quotes " and \\ backslashes\n',
      "é ü 日本 😀",
      "\ud800 lone",
      [],
      [1, "two", [3, [4]], { five: 5 }],
      { a: 1, "b c": [null, false], nested: { deeper: { deepest: "x" } } },
      { gone: undefined },
      new Date(0),
      { toJSON: () => "short" },
      { toJSON: () => ({ longer: "x".repeat(50) }), ignored: "y".repeat(500) },
      new Map<string, unknown>([
        ["a", 1],
        ["b", [2]],
      ]),
      new Map([[1, "one"]]),
      new Set(["a", "b"]),
      new Int16Array([1, -2, 300]),
      new Float64Array([0.5]),
      new Uint8Array([104, 105, 0, 255]),
      Buffer.from("hello"),
      new ArrayBuffer(7),
    ];
    for (const value of values) {
      expect(jsonBytesAtLeast(value, 1e9), String(value)).toBeLessThanOrEqual(exactBytes(value));
    }
    expect(jsonBytesAtLeast("x".repeat(5000), 1e9)).toBe(5002);
    expect(jsonBytesAtLeast(["ab", "cd"], 1e9)).toBe(exactBytes(["ab", "cd"]));
  });

  it("stops looking once the bound passes the limit", () => {
    const { items, counter } = countedItems(100_000);
    const bound = jsonBytesAtLeast(items, 1000);
    expect(bound).toBeGreaterThan(1000);
    // Each item is at least 10 bytes: about a hundred of them are read, not 100,000.
    expect(counter.reads).toBeLessThan(200);
    expect(jsonBytesAtLeast({ big: "x".repeat(10_000), after: items }, 1000)).toBeGreaterThan(10_000);
    expect(counter.reads).toBeLessThan(200);
  });
});
