import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { findTimingAssertions } from "./check-timing-assertions.ts";

const found = (text: string) => findTimingAssertions(text).map((item) => item.text);

describe("the wall-clock assertion check", () => {
  test("refuses upper bounds on values named as times or read from a clock", () => {
    expect(
      found(
        [
          "expect(elapsed).toBeLessThan(2000);",
          "expect(outcome.milliseconds).toBeLessThan(2000);",
          "expect(outcome.seconds).toBeLessThan(1);",
          "expect(run.runMs).toBeLessThanOrEqual(12_000);",
          "expect(took).not.toBeLessThan(5);",
          "expect(first.durationMs, 'killed').toBeLessThan(2000 + 10_000);",
          "expect(wall_seconds).toBeLessThan(3);",
          "expect(performance.now() - started).toBeLessThan(2000);",
          "expect(Date.now() - startedAt)\n  .toBeLessThan(2000);",
        ].join("\n"),
      ),
    ).toHaveLength(9);
  });

  test("leaves sizes, counts, lower bounds and allowed bounds alone", () => {
    expect(
      found(
        [
          "expect(items.length).toBeLessThan(5);",
          "expect(run.stdout.length).toBeLessThan(1.5 * 1024 * 1024);",
          "expect(programs).toBeLessThan(3);",
          "expect(time.durationMs).toBeGreaterThanOrEqual(5000);",
          "expect(elapsed).toBe(0);",
          "expect(state.most).toBeLessThanOrEqual(16);",
          'expect("took 5 ms").toBeLessThan(1);',
          "// timing-lint: allowed (CPU time against wall time: the CPU limit)",
          "expect(outcome.cpuSeconds).toBeLessThan(limit * outcome.wallSeconds);",
        ].join("\n"),
      ),
    ).toEqual([]);
  });

  test("as the test command runs it: exit 1 naming the file and line, exit 0 on a clean tree", () => {
    const folder = mkdtempSync(join(tmpdir(), "codeaction-timing-lint-"));
    const script = fileURLToPath(new URL("./check-timing-assertions.ts", import.meta.url));
    try {
      mkdirSync(join(folder, "clean"));
      writeFileSync(join(folder, "clean", "a.test.ts"), "expect(rows).toBeLessThan(3);\n");
      expect(execFileSync(process.execPath, [script, join(folder, "clean")], { encoding: "utf8" })).toContain(
        "no wall-clock assertions in 1 files",
      );
      mkdirSync(join(folder, "timed"));
      writeFileSync(join(folder, "timed", "b.test.ts"), "\n\nexpect(elapsedMs).toBeLessThan(2000);\n");
      const failed = (() => {
        try {
          execFileSync(process.execPath, [script, join(folder, "timed")], {
            encoding: "utf8",
            stdio: "pipe",
          });
          return undefined;
        } catch (error) {
          return error as { status: number; stderr: string };
        }
      })();
      expect(failed?.status).toBe(1);
      expect(failed?.stderr).toMatch(/b\.test\.ts:3: a wall-clock assertion: expect\(elapsedMs\)/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
