import { describe, expect, it } from "vitest";
import { normalizeAnswer, roundDecimal } from "./normalize-answer.ts";

const same = (a: string, b: string, decimals = 2) =>
  normalizeAnswer(a, { decimals }) === normalizeAnswer(b, { decimals });

describe("normalizeAnswer", () => {
  it("treats a number and a numeric string alike", () => {
    expect(same("5952.35", '"5952.35"')).toBe(true);
    expect(same("5952.35", "5952.350")).toBe(true);
    expect(same("5952.35", "$5,952.35")).toBe(true);
    expect(same("5952.35", "5952.36")).toBe(false);
  });

  it("rounds to the configured places", () => {
    expect(same("1.004", "1.0")).toBe(true);
    expect(same("1.004", "1.0", 3)).toBe(false);
  });

  it("compares strings trimmed and case-folded", () => {
    expect(same("  North America ", "north america")).toBe(true);
    expect(same("EMEA", "APAC")).toBe(false);
    // Full folding, not only lower case: ß and SS, final sigma, compatibility forms.
    expect(same("Straße", "STRASSE")).toBe(true);
    expect(same("ΟΔΟΣ", "οδος")).toBe(true);
    expect(same("ﬁnal", "FINAL")).toBe(true);
    expect(same("Straße", "Strase")).toBe(false);
  });

  it("compares JSON structurally with the same rules inside", () => {
    const a = '[{"region": "North America", "revenue": 108664.0}]';
    const b = '[{"revenue": "108664", "region": "north america"}]';
    expect(same(a, b)).toBe(true);
    expect(same(a, '[{"region": "North America", "revenue": 108664.5}]')).toBe(false);
    expect(same("[1, 2]", "[2, 1]")).toBe(false);
  });
});

describe("roundDecimal", () => {
  it("rounds exactly, half away from zero", () => {
    expect(roundDecimal("1.005", 2)).toBe("1.01");
    expect(roundDecimal("-1.005", 2)).toBe("-1.01");
    expect(roundDecimal("9.995", 2)).toBe("10.00");
    expect(roundDecimal("0.001", 2)).toBe("0.00");
    expect(roundDecimal("-0.001", 2)).toBe("0.00");
    expect(roundDecimal("1e3", 2)).toBe("1000.00");
    expect(roundDecimal("1.5e-3", 3)).toBe("0.002");
    expect(roundDecimal("12345678901234567890.125", 2)).toBe("12345678901234567890.13");
    expect(roundDecimal("7", 0)).toBe("7");
  });
});
