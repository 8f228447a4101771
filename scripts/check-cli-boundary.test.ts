import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { boundaryViolations, publicCoreSpecifiers } from "./check-cli-boundary.ts";

const cliFile = fileURLToPath(new URL("../packages/cli/src/commands/example.ts", import.meta.url));
const found = (text: string) => boundaryViolations(cliFile, text).map((item) => item.specifier);

describe("the CLI's boundary check", () => {
  test("knows core's public entry points from its package.json, and not internal", () => {
    expect(publicCoreSpecifiers()).toEqual(
      expect.arrayContaining([
        "@codeaction/core",
        "@codeaction/core/testing",
        "@codeaction/core/durable",
        "@codeaction/core/stubs",
      ]),
    );
    expect(publicCoreSpecifiers()).not.toContain("@codeaction/core/internal");
  });

  test("refuses core/internal and core's own files, however imported", () => {
    expect(
      found(
        [
          'import { buildStubs } from "@codeaction/core/internal";',
          'import type { LineOfFile } from "@codeaction/core/internal";',
          'const { loadModel } = await import("@codeaction/core/internal");',
          'export { verifyChain } from "@codeaction/core/internal";',
          'import { relayCommand } from "@codeaction/core/src/code-action/relay-process.ts";',
          'import { prompt } from "../../../core/src/code-action/prompt.ts";',
        ].join("\n"),
      ),
    ).toEqual([
      "@codeaction/core/internal",
      "@codeaction/core/internal",
      "@codeaction/core/internal",
      "@codeaction/core/internal",
      "@codeaction/core/src/code-action/relay-process.ts",
      "../../../core/src/code-action/prompt.ts",
    ]);
  });

  test("leaves the public entry points, the other packages and the CLI's own files alone", () => {
    expect(
      found(
        [
          'import { buildAgent } from "@codeaction/core";',
          'import { verifyChain } from "@codeaction/core/durable";',
          'const { renderStubSignatures } = await import("@codeaction/core/stubs");',
          'import { ScriptedChatModel } from "@codeaction/core/testing";',
          'import { packageAssets } from "@codeaction/sandbox/internal";',
          'import { UsageError } from "../errors/usage-error.ts";',
        ].join("\n"),
      ),
    ).toEqual([]);
  });

  test("as the test command runs it: exit 1 naming the file, the line and the fix; exit 0 on a clean tree", () => {
    const folder = mkdtempSync(join(tmpdir(), "codeaction-cli-boundary-"));
    const script = fileURLToPath(new URL("./check-cli-boundary.ts", import.meta.url));
    try {
      mkdirSync(join(folder, "clean"));
      writeFileSync(join(folder, "clean", "a.ts"), 'import { buildAgent } from "@codeaction/core";\n');
      expect(execFileSync(process.execPath, [script, join(folder, "clean")], { encoding: "utf8" })).toContain(
        "no import past @codeaction/core's public API in 1 CLI files",
      );
      mkdirSync(join(folder, "reaching"));
      writeFileSync(join(folder, "reaching", "b.ts"), '\nimport { x } from "@codeaction/core/internal";\n');
      let failure: { status?: number; stderr?: string } = {};
      try {
        execFileSync(process.execPath, [script, join(folder, "reaching")], {
          encoding: "utf8",
          stdio: "pipe",
        });
      } catch (error) {
        failure = error as { status?: number; stderr?: string };
      }
      expect(failure.status).toBe(1);
      expect(failure.stderr).toMatch(/b\.ts:2: imports "@codeaction\/core\/internal"/);
      expect(failure.stderr).toMatch(/make it public in core .* or move it into packages\/cli/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
