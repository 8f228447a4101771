import { describe, expect, it } from "vitest";
import { capOutput } from "./cap-output.ts";

describe("capOutput", () => {
  it("leaves text within the cap alone", () => {
    expect(capOutput("hello", { cap: 5, label: "stdout" })).toEqual({ text: "hello" });
  });

  it("cuts at the cap and says how many bytes were cut", () => {
    const { text, note } = capOutput("a".repeat(30), { cap: 10, label: "stdout" });
    expect(text).toBe("a".repeat(10));
    expect(note).toMatch(/^\[stdout cut: showing the first 10 bytes, 20 bytes cut\./);
  });

  it("never splits a UTF-8 character", () => {
    // "é" is two bytes: a cap of 3 keeps "aé" (3 bytes), a cap of 2 keeps only "a".
    expect(capOutput("aéé", { cap: 3, label: "stdout" }).text).toBe("aé");
    expect(capOutput("aéé", { cap: 2, label: "stdout" })).toMatchObject({
      text: "a",
      note: expect.stringContaining("4 bytes cut"),
    });
  });

  it("says 'more than' when the producer already cut the text, and is exact when the total is known", () => {
    expect(capOutput("a".repeat(30), { cap: 10, label: "stdout", producerTruncated: true }).note).toContain(
      "more than 20 bytes cut",
    );
    expect(
      capOutput("a".repeat(10), { cap: 10, label: "f.txt", producerTruncated: true, totalBytes: 500 }).note,
    ).toContain("showing the first 10 bytes, 490 bytes cut");
  });
});
