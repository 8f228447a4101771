import { describe, expect, it } from "vitest";
import { sniffDelimiter } from "./sniff-delimiter.ts";

describe("sniffDelimiter", () => {
  it("finds each delimiter, ignoring delimiters inside quotes", () => {
    expect(sniffDelimiter("a,b,c\n1,2,3\n")).toBe(",");
    expect(sniffDelimiter('name;note\n"Smith, John";"a, b, c"\nAda;x\n')).toBe(";");
    expect(sniffDelimiter("a\tb\n1\t2,5\n")).toBe("\t");
    expect(sniffDelimiter("a|b\n1|2\n")).toBe("|");
  });

  it("copes with a sample cut inside a quoted field", () => {
    expect(sniffDelimiter('a;b\n1;2\n3;"cut her')).toBe(";");
  });

  it("falls back to a comma for a one-column file", () => {
    expect(sniffDelimiter("name\nAda\nGrace\n")).toBe(",");
  });
});
