import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// `codeaction resume` refuses what it cannot do before anything starts, naming the cause and the fix
// (the flow itself, with real containers: approve-later.docker.test.ts).

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), "codeaction-resume-"));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const secret = { CODEACTION_RESUME_SECRET: "a-resume-secret-of-32-characters" };

describe("codeaction resume's refusals", () => {
  it("usage errors: no run id, no decision, both, --reason without --deny, --no-journal", async () => {
    for (const [args, message] of [
      [["resume"], /give the run id first/],
      [["resume", "run_1"], /give the decision: --approve or --deny/],
      [["resume", "run_1", "--approve", "--deny"], /give the decision/],
      [["resume", "run_1", "--approve", "--reason", "x"], /--reason goes with --deny/],
      [["resume", "run_1", "--approve", "--no-journal"], /--no-journal cannot be used/],
    ] as const) {
      const run = await runMain([...args], { cwd, env: secret });
      expect(run.exitCode, run.stderr).toBe(2);
      expect(run.stderr).toMatch(message);
    }
  });

  it("without CODEACTION_RESUME_SECRET it says which variable to set; without a journal, where it looked", async () => {
    const noSecret = await runMain(["resume", "run_1", "--approve"], {
      cwd,
      env: { CODEACTION_RESUME_SECRET: undefined },
    });
    expect(noSecret.exitCode).toBe(1);
    expect(noSecret.stderr).toMatch(/codeaction resume needs CODEACTION_RESUME_SECRET: set it to the key/);
    const noJournal = await runMain(["resume", "run_1", "--approve"], { cwd, env: secret });
    expect(noJournal.exitCode).toBe(1);
    expect(noJournal.stderr).toMatch(/No journal at .*runs\.jsonl.*Pass --journal FILE/);
  });

  it("a symbolic link planted as the journal's lock (which the take holds) is named as such with the fix, not an unexpected ELOOP", async () => {
    const planted = await mkdtemp(join(cwd, "lock-"));
    await mkdir(join(planted, ".codeaction"), { mode: 0o700 });
    const lockPath = join(planted, ".codeaction/runs.jsonl.lock");
    await symlink(join(planted, "elsewhere"), lockPath);
    const run = await runMain(["resume", "run_1", "--approve"], { cwd: planted, env: secret });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).not.toMatch(/unexpected error|ELOOP/);
    expect(run.stderr).toContain("codeaction resume could not take run run_1 from the journal");
    expect(run.stderr).toContain(`the lock file ${lockPath} is a symbolic link`);
    expect(run.stderr).toContain(`Remove it (rm ${lockPath})`);
  });

  // These two stay processes: what they test is the process's own stdin, a pipe and not a terminal.
  it("ask --approve needs a terminal on stdin", async () => {
    const run = await runCli(["ask", "--approve", "--replay", "x.json", "A question?"], {
      cwd,
      input: "y\n",
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--approve asks on a terminal, and stdin is not one/);
  });

  it("chat --approve needs a terminal on stdin", async () => {
    const run = await runCli(["chat", "--approve", "--replay", "x.json"], { cwd, input: "A question?\n" });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--approve asks on a terminal, and stdin is not one/);
  });
});
