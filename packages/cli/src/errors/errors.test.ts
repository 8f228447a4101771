import { CodeActionError } from "@codeaction/core";
import { SandboxError } from "@codeaction/sandbox";
import { BrandedError } from "@codeaction/sandbox/internal";
import { describe, expect, it } from "vitest";
import { CliError } from "./cli-error.ts";
import { CsvInputError } from "./csv-input-error.ts";
import { ModelMissingError } from "./model-missing-error.ts";
import { UsageError } from "./usage-error.ts";

const examples = [
  [UsageError, "UsageError", "usage", 2, new UsageError({ message: "no question", command: "ask" })],
  [
    CsvInputError,
    "CsvInputError",
    "csv-input",
    1,
    new CsvInputError({ file: "a.csv", problem: "empty", line: 2 }),
  ],
  [ModelMissingError, "ModelMissingError", "model-missing", 1, new ModelMissingError({ cwd: "/" })],
] as const;

describe("CLI errors follow the sandbox's convention (base class, code union, branded isInstance)", () => {
  it("each keeps its class name, code, exit code and message, and only its own isInstance knows it", () => {
    for (const [errorClass, name, code, exitCode, error] of examples) {
      expect(error).toMatchObject({ name, code, exitCode });
      expect(CliError.isInstance(error)).toBe(true);
      for (const [, , , , other] of examples) expect(errorClass.isInstance(other)).toBe(other === error);
      // A base error with the same code is not the subclass (the brand decides, not the code).
      expect(errorClass.isInstance(new CliError("same code", { code }))).toBe(false);
    }
    expect(examples[0][4].message).toBe("no question (see `codeaction ask --help`)");
    expect(examples[1][4].message).toBe("a.csv line 2: empty");
  });

  it("carries its cause and exit code; a duplicated copy's error passes isInstance by its Symbol.for brand", () => {
    const cause = new Error("underneath");
    const interrupted = new CliError("interrupted", { code: "interrupted", exitCode: 130, cause });
    expect(interrupted).toMatchObject({ code: "interrupted", exitCode: 130, cause });
    const fromOtherCopy = Object.assign(new Error("x"), {
      [Symbol.for("codeaction.cli.error")]: true,
      [Symbol.for("codeaction.cli.usage-error")]: true,
    });
    expect(UsageError.isInstance(fromOtherCopy)).toBe(true);
    expect(CsvInputError.isInstance(fromOtherCopy)).toBe(false);
  });
});

describe("one error base", () => {
  it("the sandbox's, core's and the CLI's errors share BrandedError and its one brand check", () => {
    for (const base of [SandboxError, CodeActionError, CliError]) {
      expect(Object.getPrototypeOf(base)).toBe(BrandedError);
      expect(Object.hasOwn(base, "hasMarker")).toBe(false);
    }
    const error = new CliError("no", { code: "usage", exitCode: 2 });
    expect(error).toBeInstanceOf(BrandedError);
    expect([error.code, error.exitCode, CliError.isInstance(error), SandboxError.isInstance(error)]).toEqual([
      "usage",
      2,
      true,
      false,
    ]);
  });
});
