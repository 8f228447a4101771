import { describe, expect, it } from "vitest";
import { extractProgram, readReplyProgram } from "./extract-program.ts";

describe("readReplyProgram", () => {
  const run = (reply: string) => readReplyProgram(reply);

  it("takes the one python block, whatever prose is around it", () => {
    expect(run("Here it is:\n```python\nprint('RESULT: 1')\n```\nDone.")).toEqual({
      ok: true,
      program: "print('RESULT: 1')",
    });
  });

  it("accepts py, Python, python3 and (when nothing is tagged python) untagged blocks", () => {
    for (const tag of ["py", "Python", "python3", ""]) {
      expect(run(`text\n\`\`\`${tag}\nx = 1\nprint(x)\n\`\`\`\n`)).toEqual({
        ok: true,
        program: "x = 1\nprint(x)",
      });
    }
  });

  it("skips blocks in other languages and untagged output next to a python block", () => {
    expect(run("```bash\nls\n```\n```python\nprint(1)\n```")).toEqual({ ok: true, program: "print(1)" });
    expect(run("```python\nprint(1)\n```\nOutput:\n```\nRESULT: 1\n```")).toEqual({
      ok: true,
      program: "print(1)",
    });
  });

  it("keeps inner backticks and indentation", () => {
    const reply = "```python\ndef f():\n    return '``'\nprint(f())\n```";
    expect(run(reply)).toEqual({ ok: true, program: "def f():\n    return '``'\nprint(f())" });
  });

  it("refuses two python blocks with one message naming the count", () => {
    const read = run("Step 1:\n```python\na = 1\n```\nStep 2:\n```python\nprint(f'RESULT: {a}')\n```");
    expect(read).toMatchObject({ ok: false, problem: "several-programs", blocks: 2 });
    if (!read.ok) expect(read.message).toContain("Your reply had 2 python blocks, so nothing was run");
  });

  it("refuses a reply with no code, saying it had no python block", () => {
    const read = run("The total revenue is 42 million.");
    expect(read).toMatchObject({ ok: false, problem: "no-program" });
    if (!read.ok) expect(read.message).toContain("your reply had no python block");
  });

  it("refuses a reply with only a bash block, naming it", () => {
    const read = run("```bash\ncat orders.csv | wc -l\n```");
    expect(read).toMatchObject({ ok: false, problem: "no-program" });
    if (!read.ok) expect(read.message).toContain("it had only a bash block, and only Python runs");
  });

  it("refuses an empty python block", () => {
    expect(run("```python\n\n```")).toMatchObject({ ok: false, problem: "no-program" });
  });

  it("runs a bare program with no fence, but not prose that mentions RESULT", () => {
    expect(run("  import json\nprint('RESULT: 1')\n")).toEqual({
      ok: true,
      program: "import json\nprint('RESULT: 1')",
    });
    expect(run("print('RESULT: 1')")).toEqual({ ok: true, program: "print('RESULT: 1')" });
    expect(run("RESULT: 42")).toMatchObject({ ok: false, problem: "no-program" });
    expect(run("The RESULT is 42.")).toMatchObject({ ok: false, problem: "no-program" });
  });

  it("takes an unclosed block to its end", () => {
    expect(run("Sure:\n```python\nprint(1)\n")).toEqual({ ok: true, program: "print(1)" });
  });
});

describe("extractProgram", () => {
  it("is the one program, else the first python block, else empty", () => {
    expect(extractProgram("```python\nprint(1)\n```")).toBe("print(1)");
    expect(extractProgram("```python\na\n```\n```python\nb\n```")).toBe("a");
    expect(extractProgram("no code here")).toBe("");
  });
});
