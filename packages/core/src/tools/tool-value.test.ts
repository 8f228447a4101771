import { describe, expect, it } from "vitest";
import { ToolValueError } from "../errors/tool-value-error.ts";
import { encodeToolValue, taggedValueKey } from "./tool-value.ts";

const text = (value: unknown) => encodeToolValue(value, "t").text;

describe("encodeToolValue", () => {
  it("writes JSON with NaN/Infinity tokens and exact big integers", () => {
    expect(text({ a: [1, "b", null, true], n: Number.NaN, i: Number.POSITIVE_INFINITY })).toBe(
      '{"a":[1,"b",null,true],"n":NaN,"i":Infinity}',
    );
    expect(text(2n ** 70n)).toBe("1180591620717411303424");
    expect(text(undefined)).toBe("null");
    expect(text({ gone: undefined })).toBe('{"gone":null}');
  });

  it("maps Date, Map, Set, typed arrays and bytes", () => {
    expect(text(new Date(0))).toBe('"1970-01-01T00:00:00.000Z"');
    expect(text(new Map([["a", new Set([1])]]))).toBe('{"a":[1]}');
    expect(text(new Map([[1, "one"]]))).toBe(
      `{${JSON.stringify(taggedValueKey)}:"map","entries":[[1,"one"]]}`,
    );
    expect(text(new Int16Array([1, -2]))).toBe("[1,-2]");
    expect(text(new Uint8Array([104, 105]))).toBe(
      `{${JSON.stringify(taggedValueKey)}:"bytes","base64":"aGk="}`,
    );
    expect(text({ toJSON: () => ({ x: 1n }) })).toBe('{"x":1}');
  });

  it("keeps a JSON-safe record", () => {
    const { record } = encodeToolValue(
      { big: 2n ** 70n, small: 3n, nan: Number.NaN, bytes: Buffer.from("hi") },
      "t",
    );
    expect(record).toEqual({
      big: "1180591620717411303424",
      small: 3,
      nan: "NaN",
      bytes: { base64: "aGk=" },
    });
  });

  it("refuses values with no Python form, naming the tool and the path", () => {
    class Account {
      readonly id: number;
      constructor(id: number) {
        this.id = id;
      }
    }
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const cases: [unknown, string][] = [
      [{ rows: [{ owner: new Account(1) }] }, "result.rows[0].owner is a Account instance with no toJSON()"],
      [{ "odd key": () => 1 }, 'result["odd key"] is a function'],
      [loop, "result.self is a reference back to an enclosing value (a cycle)"],
      [new Date(Number.NaN), "result is an invalid Date"],
      [Symbol("s"), "result is a symbol"],
    ];
    for (const [value, message] of cases) {
      const error = (() => {
        try {
          encodeToolValue(value, "accounts");
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(ToolValueError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(
        `The tool 'accounts' returned a value that cannot be passed on: ${message}`,
      );
    }
  });
});
