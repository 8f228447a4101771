import { copyFile, lstat, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { journalRecords, programReplay } from "./cli-files.ts";
import { repositoryRoot, runCli } from "./run-cli.ts";

// The journal of code-action runs, through the CLI process with real containers and a replayed
// model: bounded output tails, the attempts of a run that failed, and chat's private /save.

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-journal-docker-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

type JournaledAttempt = Record<string, unknown> & {
  stdout: string;
  stderr: string;
  stdoutOmitted?: number;
  stderrOmitted?: number;
};
type Journaled = Record<string, unknown> & { runId?: string; attempts: JournaledAttempt[] };

describe("the journal of code-action runs", () => {
  it("keeps bounded tails of a program's output: 1 MiB of control bytes on each stream is not journaled whole", async () => {
    const cwd = await mkdtemp(join(folder, "flood-"));
    const replay = await programReplay(folder, "flood.json", [
      [
        "import sys",
        'sys.stderr.write("\\x01" * (1024 * 1024))',
        'sys.stdout.write("\\x02" * (1024 * 1024) + "\\n")',
        'print("RESULT:", 42)',
      ].join("\n"),
    ]);
    const run = await runCli(["ask", "--replay", replay, "flood"], { cwd });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("42");
    const size = (await stat(join(cwd, ".codeaction/runs.jsonl"))).size;
    expect(size).toBeLessThan(100_000);
    const [record] = await journalRecords<Journaled>(cwd);
    const [attempt] = record!.attempts;
    expect(attempt!.stdout.endsWith("RESULT: 42\n")).toBe(true);
    expect(attempt!.stdout.length).toBe(4000);
    // The sandbox keeps up to about 1 MB of each stream; the record keeps the last 4,000 characters.
    expect(attempt!.stdoutOmitted).toBeGreaterThan(900_000);
    expect(attempt!.stderr.length).toBe(4000);
    expect(attempt!.stderrOmitted).toBeGreaterThan(900_000);
  });

  it("keeps the runId and the failed attempt (its program and traceback) when the scripted model then runs out", async () => {
    const cwd = await mkdtemp(join(folder, "failed-"));
    const replay = await programReplay(folder, "failed.json", ["import pandas\nprint('RESULT:', 1)"]);
    const run = await runCli(["ask", "--replay", replay, "chart"], { cwd });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/scripted model has no reply left/);
    const [record] = await journalRecords<Journaled>(cwd);
    expect(record).toMatchObject({ status: "failed", error: { code: "scripted-replies-exhausted" } });
    expect(record!.runId).toMatch(/^run_/);
    expect(record!.attempts).toHaveLength(1);
    expect(record!.attempts[0]).toMatchObject({
      attempt: 1,
      program: "import pandas\nprint('RESULT:', 1)",
      status: "error",
      exitCode: 1,
    });
    // The model's own error carries the attempts (and the runId): the record keeps the agent's
    // attempt with its reply and timings, not one pieced together from the run's events.
    expect(record!.attempts[0]!.fromEvents).toBeUndefined();
    expect(record!.attempts[0]!.modelReply).toContain("import pandas");
    expect(record!.attempts[0]!.stderr).toMatch(
      /Traceback[\s\S]*ModuleNotFoundError: No module named 'pandas'/,
    );
  });
});

describe("codeaction chat's /save", () => {
  it("writes the session 0600, and refuses to write through a planted link", async () => {
    const cwd = await mkdtemp(join(folder, "chat-"));
    const replay = await programReplay(folder, "chat.json", ['print("RESULT:", 7)']);
    const target = join(cwd, "elsewhere.json");
    await writeFile(target, "");
    await symlink(target, join(cwd, "linked.json"));
    const run = await runCli(["chat", "--replay", replay], {
      cwd,
      input: "How many?\n/save session.json\n/save linked.json\n/exit\n",
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("7");
    expect((await stat(join(cwd, "session.json"))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(join(cwd, "session.json"), "utf8")).turns[0].answer).toBe("7");
    expect(run.stderr).toMatch(/cannot save the session: .*linked\.json is a symbolic link/);
    expect(await readFile(target, "utf8")).toBe("");
    expect((await lstat(join(cwd, "linked.json"))).isSymbolicLink()).toBe(true);
  });
});

describe("codeaction replay", () => {
  it("reproduces a journaled ask over orders.csv with no model and no tools, also from a rotated file", async () => {
    const cwd = await mkdtemp(join(folder, "replay-"));
    // The data file is removed before the replay: no tool could read it.
    await copyFile(join(repositoryRoot, "examples/data/orders.csv"), join(cwd, "orders.csv"));
    const replay = join(repositoryRoot, "examples/replays/q3-revenue.json");
    // A journal this small rotates at the second record: the first run's record is in runs.1.jsonl.
    const env = { CODEACTION_JOURNAL_MAX_BYTES: "1000" };
    const ask = ["ask", "--quiet", "--csv", "orders.csv", "--replay", replay, "Q3 revenue per region"];
    for (const _ of [1, 2]) {
      const asked = await runCli(ask, { cwd, env });
      expect(asked.exitCode, asked.stderr).toBe(0);
    }
    await unlink(join(cwd, "orders.csv"));
    const rotated = join(cwd, ".codeaction/runs.1.jsonl");
    const [first] = await journalRecords<Journaled>(cwd, "runs.1.jsonl");
    const [second] = await journalRecords<Journaled>(cwd);
    const stored = first!.replay as { result: string; callLog: { tool: string; result?: string }[] };
    expect(stored.callLog.map((entry) => entry.tool)).toEqual(["load_orders"]);
    // The attempts do not copy the call log: it is kept once, in `replay`.
    expect(first!.attempts.every((attempt) => !("callLog" in attempt))).toBe(true);

    const reproduced = (runId: string) =>
      new RegExp(
        `^reproduced: run ${runId}, 1 tool call\\(s\\) answered from the log, the same RESULT: \\[\\{"region": "North America", "revenue": 108664`,
      );
    const last = await runCli(["replay"], { cwd });
    expect(last.exitCode, last.stderr).toBe(0);
    expect(last.stdout).toMatch(reproduced(second!.runId!));
    const older = await runCli(["replay", first!.runId!], { cwd });
    expect(older.exitCode, older.stderr).toBe(0);
    expect(older.stdout).toMatch(reproduced(first!.runId!));
    expect(older.stderr).not.toMatch(/warning/);

    // The stored result of the first run's call edited in place (its tag kept): the chain no longer
    // holds at that record, so replay refuses it and names it; --unverified replays it with a warning.
    const line = (await readFile(rotated, "utf8")).trimEnd();
    const edited = JSON.parse(line);
    edited.replay.callLog[0].result = edited.replay.callLog[0].result.replaceAll(
      '"region":"APAC"',
      '"region":"Mars"',
    );
    expect(edited.replay.callLog[0].result).not.toBe(stored.callLog[0]!.result);
    await writeFile(rotated, `${JSON.stringify(edited)}\n`);
    const refused = await runCli(["replay", first!.runId!], { cwd });
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toMatch(
      new RegExp(
        `Cannot replay: the journal's chain is broken at or before run ${first!.runId}'s record: record 1 \\(run ${first!.runId}\\) at \\S*runs\\.1\\.jsonl line 1 was changed.*--unverified`,
      ),
    );
    // The second run's record links to the edited one: replaying it is refused too.
    expect((await runCli(["replay"], { cwd })).stderr).toMatch(/Cannot replay: .*record 1 .* was changed/);

    const differs = await runCli(["replay", first!.runId!, "--unverified"], { cwd });
    expect(differs.exitCode).toBe(1);
    expect(differs.stderr).toMatch(/warning: replaying an unverified record: .*record 1 .* was changed/);
    expect(differs.stdout).toMatch(/^differs: run run_\w+: the program printed RESULT .*; the record says /);

    const unknown = await runCli(["replay", "run_nosuchrun"], { cwd });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toMatch(/holds no run run_nosuchrun/);
  });
});
