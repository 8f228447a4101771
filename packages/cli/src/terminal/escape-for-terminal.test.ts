import { describe, expect, it } from "vitest";
import { escapeForTerminal } from "./escape-for-terminal.ts";

describe("escapeForTerminal", () => {
  it("leaves ordinary text, newlines, tabs and non-ASCII letters alone", () => {
    const text = "North America: 108,664.00\n\tEMEA: 77 689 €, Zürich, 東京";
    expect(escapeForTerminal(text)).toBe(text);
  });

  it("turns an OSC window-title sequence into visible text", () => {
    const escaped = escapeForTerminal("\u001b]0;pwned\u0007done");
    expect(escaped).toBe("\\x1b]0;pwned\\x07done");
    expect(escaped).not.toContain("\u001b");
    expect(escaped).not.toContain("\u0007");
  });

  it("neutralises CSI colour and clear-screen sequences, OSC 52 clipboard writes and OSC 8 links", () => {
    const hostile = [
      "\u001b[2J\u001b[H",
      "\u001b]52;c;ZWNobyBwd25lZA==\u001b\\",
      "\u001b]8;;https://example.invalid\u001b\\click\u001b]8;;\u001b\\",
      "\u001b[31mred\u001b[0m",
    ].join("");
    const escaped = escapeForTerminal(hostile);
    expect(escaped).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(escaped).toContain("\\x1b]52;c;");
  });

  it("escapes carriage returns, backspaces, DEL and C1 controls such as CSI (U+009B)", () => {
    expect(escapeForTerminal("ok\rFAKE")).toBe("ok\\x0dFAKE");
    expect(escapeForTerminal("a\bb\u007fc")).toBe("a\\x08b\\x7fc");
    expect(escapeForTerminal("\u009b2J")).toBe("\\x9b2J");
  });

  it("escapes bidirectional controls that reorder what the reader sees", () => {
    expect(escapeForTerminal("abc\u202edcba")).toBe("abc\\u202edcba");
    expect(escapeForTerminal("\u2066x\u2069")).toBe("\\u2066x\\u2069");
  });

  it("escapes newlines and tabs too when asked for one line", () => {
    expect(escapeForTerminal("a\nb\tc", { keepNewlines: false })).toBe("a\\x0ab\\x09c");
  });
});
