import { describe, expect, test } from "vitest";
import { fileLengthProblems, lineCount } from "./file-lengths.ts";
import { functionLengthProblems } from "./function-lengths.ts";

describe("the file-length check (over 400 lines)", () => {
  test("refuses a new file over the limit, passes the allowed ones and the short ones", () => {
    const lengths = new Map([
      ["packages/a/src/long.ts", 401],
      ["packages/a/src/allowed.ts", 585],
      ["packages/a/src/short.ts", 400],
    ]);
    expect(fileLengthProblems(lengths, { "packages/a/src/allowed.ts": "issue 30" })).toEqual([
      "packages/a/src/long.ts: 401 lines, over 400: split it along its seams",
    ]);
  });

  test("an allow-list entry that is no longer needed is refused too", () => {
    const lengths = new Map([["packages/a/src/split.ts", 120]]);
    expect(
      fileLengthProblems(lengths, {
        "packages/a/src/split.ts": "issue 30",
        "packages/a/src/gone.ts": "issue 30",
      }),
    ).toEqual([
      "packages/a/src/split.ts (issue 30) is 120 lines now: take it off the allow-list in scripts/file-lengths.ts",
      "packages/a/src/gone.ts (issue 30) is allowed but does not exist: take it off the list",
    ]);
  });

  test("counts lines as an editor does", () => {
    expect([
      lineCount(""),
      lineCount("a"),
      lineCount("a\n"),
      lineCount("a\nb\n"),
      lineCount("a\n\n"),
    ]).toEqual([0, 1, 1, 2, 2]);
  });
});

describe("the function-length check (over 60 lines)", () => {
  test("refuses a new long function, not a class, nor an allowed one; a stale entry is refused", () => {
    const lengths = [
      { file: "packages/a/src/x.ts", name: "tooLong", lines: 61 },
      { file: "packages/a/src/x.ts", name: "fine", lines: 60 },
      { file: "packages/a/src/relay.py", name: "class Relay", lines: 199 },
      { file: "packages/a/src/y.ts", name: "Known.method", lines: 70 },
      { file: "packages/a/src/y.ts", name: "shortened", lines: 40 },
    ];
    expect(
      functionLengthProblems(lengths, {
        "packages/a/src/y.ts Known.method": "issue 30",
        "packages/a/src/y.ts shortened": "issue 30",
      }),
    ).toEqual([
      "packages/a/src/x.ts: tooLong is 61 lines, over 60: split it",
      "packages/a/src/y.ts shortened (issue 30) is not over 60 lines now: take it off the allow-list in scripts/function-lengths.ts",
    ]);
  });
});
