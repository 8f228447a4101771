import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { jsonStart, keepMessage, keepValue, previewCharacters } from "./bounded-value.ts";

v8.setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Heap bytes in use after a full collection. */
function heapInUse(): number {
  collect();
  collect();
  return v8.getHeapStatistics().used_heap_size;
}

describe("jsonStart", () => {
  it("is JSON.stringify's text when it fits, and its start when it does not", () => {
    const values: unknown[] = [
      null,
      'text with "quotes" and \n',
      [1, "two", null, undefined, { three: [3] }],
      { a: 1, gone: undefined, skip: () => 1, nested: { b: [true, false] } },
      { toJSON: () => ({ as: "toJSON says" }) },
      new Date(0),
      "x".repeat(5000),
      Array.from({ length: 3000 }, (_, index) => index),
      Object.fromEntries(Array.from({ length: 3000 }, (_, index) => [`key ${index}`, index])),
    ];
    for (const value of values) {
      const whole = JSON.stringify(value);
      const start = jsonStart(value, 100);
      expect(start.complete, whole.slice(0, 40)).toBe(whole.length <= 100);
      if (start.complete) expect(start.text).toBe(whole);
      else {
        expect(start.text.length).toBeGreaterThan(100);
        expect(start.text.length).toBeLessThanOrEqual(101);
        expect(whole.startsWith(start.text)).toBe(true);
      }
    }
  });

  it("reads no more of a value than its start needs", () => {
    let reads = 0;
    const items = Array.from({ length: 100_000 }, () => ({
      get name() {
        reads += 1;
        return "an item";
      },
    }));
    expect(jsonStart(items, previewCharacters).complete).toBe(false);
    expect(reads).toBeLessThan(200);
  });
});

describe("keepValue and keepMessage", () => {
  it("keep small values whole and large ones as a preview, its size and length", () => {
    expect(keepValue({ a: [1, 2] })).toEqual({ value: { a: [1, 2] } });
    const big = { rows: "x".repeat(10_000) };
    const kept = keepValue(big, 10_011);
    expect(kept).toEqual({
      preview: JSON.stringify(big).slice(0, previewCharacters),
      bytes: 10_011,
      length: 1,
    });
    expect(keepValue(Array.from({ length: 5000 }, () => 1))).toMatchObject({ length: 5000 });
    expect(keepMessage("m".repeat(2500))).toBe(`${"m".repeat(previewCharacters)} [... 500 more characters]`);
  });

  it("previews of large values do not keep the values alive", () => {
    // A cut of a string can be a view that keeps the whole string: 40 previews of 1 MiB values
    // would then hold 40 MiB. They must hold about 40 x 2,000 characters.
    const before = heapInUse();
    const kept: unknown[] = [];
    for (let index = 0; index < 40; index += 1) {
      const value = { value: `${index}`.padEnd(1024 * 1024, "{}") };
      kept.push(keepValue(value), keepMessage(`error ${index} ${value.value}`));
    }
    const grown = heapInUse() - before;
    expect(kept).toHaveLength(80);
    expect(grown).toBeLessThan(8 * 1024 * 1024);
  });
});
