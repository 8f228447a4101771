import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot, runCli } from "./run-cli.ts";

// `codeaction ask` as a process, real sandbox, replayed model: the line that says an attempt failed
// names the program's error (a traceback's last line) and, where one is known, the fix.

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-attempt-failure-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("codeaction ask: why an attempt failed", () => {
  it("the chart replay without --data names the missing module and says to use --data", async () => {
    const run = await runCli([
      "ask",
      "--no-journal",
      "--csv",
      orders,
      "--replay",
      join(repositoryRoot, "examples/replays/q3-revenue-chart.json"),
      "Chart the Q3 revenue per region.",
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(
      /^attempt 1 failed: The program failed with exit code 1: ModuleNotFoundError: No module named '(matplotlib|pandas)'; asking the model for a corrected program$/m,
    );
    expect(run.stderr).toMatch(
      /^codeaction: (matplotlib|pandas) is in the data image: run again with --data/m,
    );
    expect(run.stderr).not.toContain(".;");
  });

  it("a module no image of ours has gets the image-building fix; an error without a traceback gets no fix", async () => {
    const replay = join(folder, "yaml.json");
    const programs = ["import yaml\nprint('RESULT:', 1)", 'raise SystemExit("still broken")'];
    await writeFile(
      replay,
      JSON.stringify({ replies: programs.map((program) => `Program:\n\n\`\`\`python\n${program}\n\`\`\``) }),
    );
    const run = await runCli(["ask", "--no-journal", "--replay", replay, "Parse it."]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(
      "attempt 1 failed: The program failed with exit code 1: ModuleNotFoundError: No module named 'yaml'; asking the model for a corrected program",
    );
    expect(run.stderr).toContain(
      "codeaction: the sandbox image has no yaml and a program cannot pip install it: build an image that has it (codeaction image build --base-image IMAGE --tag NAME) and pass --image NAME",
    );
    expect(run.stderr).not.toContain("--data");
  });
});
