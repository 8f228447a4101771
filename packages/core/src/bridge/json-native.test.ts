import { expect, test } from "vitest";
import { toJsonNative } from "./json-native.ts";

test("JSON-native values pass unchanged, others become their string form", () => {
  class Point {
    toString() {
      return "Point(1, 2)";
    }
  }
  const circular: Record<string, unknown> = { name: "loop" };
  circular.self = circular;
  expect(toJsonNative({ a: [1, "b", null, true, { c: 2.5 }] })).toEqual({
    a: [1, "b", null, true, { c: 2.5 }],
  });
  expect(toJsonNative(undefined)).toBeNull();
  expect(toJsonNative([undefined, Number.POSITIVE_INFINITY, 5n])).toEqual([null, "Infinity", "5"]);
  expect(toJsonNative({ when: new Date(0), point: new Point(), skip: undefined })).toEqual({
    when: "1970-01-01T00:00:00.000Z",
    point: "Point(1, 2)",
  });
  expect(toJsonNative(circular)).toEqual({ name: "loop", self: "[Circular]" });
});
