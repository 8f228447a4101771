import { describe, expect, it } from "vitest";
import { describeAttemptFailure, lastErrorLine } from "./describe-attempt-failure.ts";

const traceback = `Traceback (most recent call last):
  File "/workspace/program.py", line 3, in <module>
    import pandas as pd
ModuleNotFoundError: No module named 'pandas'
`;

describe("describeAttemptFailure", () => {
  it("names the traceback's last line and the fix, without a stray period before the semicolon", () => {
    expect(
      describeAttemptFailure({
        attempt: 1,
        reason: "The program failed with exit code 1.",
        stderrTail: traceback,
        image: "codeaction/python:3.11",
      }),
    ).toEqual([
      "attempt 1 failed: The program failed with exit code 1: ModuleNotFoundError: No module named 'pandas'; asking the model for a corrected program",
      "codeaction: pandas is in the data image: run again with --data (numpy, pandas, matplotlib, openpyxl)",
    ]);
  });

  it("on the data image a missing pandas is not blamed on --data; no traceback, no error line", () => {
    const onData = describeAttemptFailure({
      attempt: 2,
      reason: "The program failed with exit code 1.",
      stderrTail: traceback,
      image: "codeaction/python:3.11-data",
    });
    expect(onData[1]).toContain("build an image that has it");
    expect(
      describeAttemptFailure({ attempt: 1, reason: "The program printed no RESULT: line.", stderrTail: "" }),
    ).toEqual([
      "attempt 1 failed: The program printed no RESULT: line; asking the model for a corrected program",
    ]);
  });

  it("finds the last exception line, dotted names included, and escapes what a program wrote", () => {
    expect(lastErrorLine("x\njson.decoder.JSONDecodeError: Expecting value\n")).toBe(
      "json.decoder.JSONDecodeError: Expecting value",
    );
    expect(lastErrorLine("just some output\n")).toBeUndefined();
    const [line] = describeAttemptFailure({
      attempt: 1,
      reason: "failed.",
      stderrTail: "ValueError: \u001b]52;c;AAAA\u0007",
    });
    expect(line).not.toContain("\u001b");
  });
});
