import { describe, expect, it } from "vitest";
import { classifyCell, convertCell, convertSampledCell, widenType } from "./column-types.ts";

describe("column types", () => {
  it("classifies cells", () => {
    expect(["12", "-3", "+4", "0"].map(classifyCell)).toEqual(["int", "int", "int", "int"]);
    expect(["1.5", "-0.25", ".5", "1e3", "29.0"].map(classifyCell)).toEqual([
      "float",
      "float",
      "float",
      "float",
      "float",
    ]);
    expect(["true", "FALSE"].map(classifyCell)).toEqual(["bool", "bool"]);
    expect(["", "   "].map(classifyCell)).toEqual(["empty", "empty"]);
    expect(["007", "1,000", "NaN", "inf", "yes", "9007199254740993", "2026-07-01"].map(classifyCell)).toEqual(
      ["str", "str", "str", "str", "str", "float", "str"],
    );
  });

  it("widens int to float, and anything mixed to str", () => {
    expect(widenType("int", "float")).toBe("float");
    expect(widenType("empty", "bool")).toBe("bool");
    expect(widenType("bool", "empty")).toBe("bool");
    expect(widenType("int", "bool")).toBe("str");
    expect(widenType("float", "str")).toBe("str");
  });

  it("converts blank cells to null and keeps str cells exactly as written", () => {
    expect(convertCell(" ", "int")).toBeNull();
    expect(convertCell("42", "float")).toBe(42);
    expect(convertCell("True", "bool")).toBe(true);
    expect(convertCell(" padded ", "str")).toBe(" padded ");
  });

  it("gives a sampled column's cell that does not fit its type as its text, a big integer too", () => {
    expect(convertSampledCell("2.5", "int")).toBe(2.5);
    expect(convertSampledCell("n/a", "float")).toBe("n/a");
    expect(convertSampledCell("yes", "bool")).toBe("yes");
    // 2^53 + 1: a number would round it to 9007199254740992.
    expect(convertSampledCell("9007199254740993", "int")).toBe("9007199254740993");
    expect(convertSampledCell("9007199254740993", "float")).toBe(Number("9007199254740993"));
  });
});
