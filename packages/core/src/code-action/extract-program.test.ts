import { describe, expect, it } from "vitest";
import { extractProgram, parseResultLine } from "./extract-program.ts";

describe("extractProgram", () => {
  it("takes the first python block", () => {
    const reply = "Here it is:\n```python\nprint('a')\n```\nand another\n```python\nprint('b')\n```";
    expect(extractProgram(reply)).toBe("print('a')");
  });

  it("accepts py, Python, python3 and untagged blocks", () => {
    for (const tag of ["py", "Python", "python3", ""]) {
      expect(extractProgram(`text\n\`\`\`${tag}\nx = 1\nprint(x)\n\`\`\`\n`)).toBe("x = 1\nprint(x)");
    }
  });

  it("skips blocks in other languages", () => {
    const reply = "```bash\nls\n```\n```python\nprint(1)\n```";
    expect(extractProgram(reply)).toBe("print(1)");
  });

  it("keeps inner backticks and indentation", () => {
    const reply = "```python\ndef f():\n    return '``'\nprint(f())\n```";
    expect(extractProgram(reply)).toBe("def f():\n    return '``'\nprint(f())");
  });

  it("uses the whole reply when there is no block", () => {
    expect(extractProgram("  print('RESULT: 1')\n")).toBe("print('RESULT: 1')");
  });

  it("takes an unclosed block to its end", () => {
    expect(extractProgram("Sure:\n```python\nprint(1)\n")).toBe("print(1)");
  });
});

describe("parseResultLine", () => {
  it("takes the last RESULT line, as printed", () => {
    expect(parseResultLine('RESULT: 1\nnoise\nRESULT: [{"a": 1.0}]\n')).toBe('[{"a": 1.0}]');
  });

  it("ignores RESULT not at the start of a line and handles CRLF", () => {
    expect(parseResultLine("the RESULT: no\r\nRESULT: 42\r\n")).toBe("42");
    expect(parseResultLine("nothing here")).toBeUndefined();
  });

  it("keeps an empty result", () => {
    expect(parseResultLine("RESULT:\n")).toBe("");
  });
});
