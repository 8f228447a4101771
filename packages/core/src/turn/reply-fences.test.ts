// Issue 45 #7: a reply of unclosed fences is read in time linear in its size (counted through the
// scan's counter, not timed), and a reply over the cap is refused unread with the cap in its message.
import { describe, expect, it } from "vitest";
import { readSearchQueries } from "../discovery/function-lookup.ts";
import { readReplyProgram } from "./extract-program.ts";
import { fencedBlocks, maxReplyCharacters, type ScanCounter } from "./reply-fences.ts";

/** A reply of `bytes` characters of opening lines that are never closed, of the program's and the search's kind. */
function unclosedFences(bytes: number, opening: string): string {
  const unit = `${opening}\nx = 1\n`;
  return unit.repeat(Math.ceil(bytes / unit.length));
}

function stepsPerLine(reply: string, accepts: Parameters<typeof fencedBlocks>[1]): number {
  const counter: ScanCounter = { steps: 0 };
  expect(fencedBlocks(reply, accepts, counter)).toEqual([]);
  return counter.steps / reply.split("\n").length;
}

describe("reading a model's reply (issue 45 #7)", () => {
  for (const [kind, opening] of [
    ["program", "```python"],
    ["search", "```search"],
    ["mixed markers", "~~~~ py"],
  ] as const) {
    it(`unclosed ${kind} fences: the work per line is the same at 64 KiB and 1 MiB`, () => {
      const small = stepsPerLine(unclosedFences(64 * 1024, opening), () => true);
      const large = stepsPerLine(unclosedFences(1024 * 1024, opening), () => true);
      // A scan to the end of the reply for each opening line makes the large reply's work per
      // line about 16 times the small one's; one pass keeps both at a few steps.
      expect(small).toBeLessThanOrEqual(3);
      expect(large).toBeLessThanOrEqual(3);
      expect(large / small).toBeLessThan(1.1);
    });
  }

  it("fences closed only by a longer marker are not closed, and the scan stays linear", () => {
    const reply = "```python\nx = 1\n````\n".repeat(20_000);
    const counter: ScanCounter = { steps: 0 };
    expect(fencedBlocks(reply, () => true, counter)).toEqual([
      // The lines "````" alone are openings of their own, closed by the next "````".
      ...Array.from({ length: 10_000 }, () => ({ tag: "", body: "```python\nx = 1" })),
    ]);
    expect(counter.steps / reply.split("\n").length).toBeLessThanOrEqual(3);
  });

  it("a reply over the cap is refused unread, and the model is told its size and the cap", () => {
    const program = `\`\`\`python\nRESULT = 1\n\`\`\`\n`;
    const reply = `${program}${"#".repeat(maxReplyCharacters)}`;
    const read = readReplyProgram(reply);
    expect(read).toMatchObject({ ok: false, problem: "reply-too-long" });
    expect(read.ok ? "" : read.message).toContain(
      `your reply was ${reply.length} characters, over the 262144`,
    );
    expect(
      readSearchQueries(`\`\`\`search\nweather\n\`\`\`\n${"#".repeat(maxReplyCharacters)}`),
    ).toBeUndefined();
    // At the cap it is read.
    expect(readReplyProgram(`${program}${"#".repeat(maxReplyCharacters - program.length)}`)).toMatchObject({
      ok: true,
    });
  });

  it("blocks, their tags and the unclosed last block read as before", () => {
    expect(readReplyProgram("text\n```python\r\nRESULT = 1\r\n```\r\nmore")).toEqual({
      ok: true,
      program: "RESULT = 1",
    });
    expect(readReplyProgram("```py\nRESULT = 2\n")).toEqual({ ok: true, program: "RESULT = 2" });
    expect(readSearchQueries("```SEARCH \n- weather\n```\n")).toEqual(["weather"]);
    expect(readSearchQueries("```searching\nweather\n```\n")).toBeUndefined();
  });
});
