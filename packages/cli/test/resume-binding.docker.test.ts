import { randomBytes } from "node:crypto";
import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ChainEnd, chainEndOf, chainedLine } from "@codeaction/core/durable";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { laterRun } from "./approve-later-session.ts";
import { journalRecords } from "./cli-files.ts";
import { runCli } from "./run-cli.ts";

// What `codeaction resume` binds an approval to, against someone who can write the journal (issue
// 45, High 4): each attack as processes on real containers, the tools counted on the host in a
// ledger file. The state's signed run id must be the run named; with CODEACTION_JOURNAL_KEY set the
// chain is verified first; a state is consumed once.

const secret = randomBytes(32).toString("hex");
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-resume-binding-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

type Kept = { runId: string; status: string; resume?: { pending: unknown; state: { runId: string } } };

/** The journal's run records (its taken lines, codeaction resume's, left out). */
async function records(cwd: string): Promise<Kept[]> {
  return journalRecords<Kept>(cwd);
}

/** Writes `kept` as the journal, its SHA-256 chain rebuilt from the first record (what anyone can do without a key). */
async function rewriteJournal(cwd: string, kept: Kept[]): Promise<void> {
  let end: ChainEnd | undefined;
  let text = "";
  for (const record of kept) {
    const line = chainedLine(record, end, undefined);
    end = chainEndOf(line);
    text += `${line}\n`;
  }
  await writeFile(join(cwd, ".codeaction/runs.jsonl"), text);
}

describe("codeaction resume binds the approval to the run it names", () => {
  it("run B's signed state moved into run A's record, the chain rebuilt: audit verify passes, resume A refuses; nothing is charged", async () => {
    const env = { CODEACTION_RESUME_SECRET: secret };
    const runA = await laterRun({ parent: folder, name: "swap", amount: 100, env });
    expect(runA.asked.exitCode, runA.asked.output).toBe(3);
    const runB = await laterRun({ parent: folder, name: "swap", amount: 100000, env, cwd: runA.cwd });
    expect(runB.asked.exitCode, runB.asked.output).toBe(3);
    const [recordA, recordB] = await records(runA.cwd);
    expect(recordB!.resume?.pending).toMatchObject({ tool: "charge_card", args: { amount: 100000 } });
    await rewriteJournal(runA.cwd, [{ ...recordA!, resume: recordB!.resume! }, recordB!]);
    const audit = await runCli(["audit", "verify"], { cwd: runA.cwd });
    expect(audit.exitCode, audit.stdout).toBe(0);

    const resumed = await runCli(["resume", recordA!.runId, "--approve", ...runA.options], {
      cwd: runA.cwd,
      env,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(1);
    expect(resumed.stderr).toContain(
      `the state kept in run ${recordA!.runId}'s record is signed for run ${recordB!.runId}`,
    );
    expect(await readFile(runA.ledger, "utf8")).toBe("lookup ada\nlookup ada\n");
  });

  it("with CODEACTION_JOURNAL_KEY set, an untagged line is refused before anything resumes; the call is made once", async () => {
    const env = { CODEACTION_RESUME_SECRET: secret, CODEACTION_JOURNAL_KEY: randomBytes(32).toString("hex") };
    const run = await laterRun({ parent: folder, name: "untagged", amount: 100, env });
    expect(run.asked.exitCode, run.asked.output).toBe(3);
    const [waiting] = await records(run.cwd);
    const approved = await runCli(["resume", waiting!.runId, "--approve", ...run.options], {
      cwd: run.cwd,
      env,
    });
    expect(approved.exitCode, approved.stderr).toBe(0);
    // Shown before the decision: the signed call, with the digest of its arguments.
    expect(approved.stderr).toMatch(
      new RegExp(
        `run ${waiting!.runId} waits on charge_card \\{"amount":100,"customer":"ada"\\} \\(its signed state; arguments sha256 [0-9a-f]{16}\\); approving it`,
      ),
    );
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\ncharge_card ada 100\n");

    // The waiting record again, as a line without its tag: the run looks as if it still waited.
    const { chain: _chain, tag: _tag, ...plain } = waiting as Kept & { chain?: unknown; tag?: unknown };
    await appendFile(join(run.cwd, ".codeaction/runs.jsonl"), `${JSON.stringify(plain)}\n`);
    const again = await runCli(["resume", waiting!.runId, "--approve", ...run.options], {
      cwd: run.cwd,
      env,
    });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/codeaction resume refused: the journal .* does not hold as it was written/);
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\ncharge_card ada 100\n");
  });

  it("a state is consumed once: the resumed record removed from the journal's end, a second resume is refused", async () => {
    const env = { CODEACTION_RESUME_SECRET: secret };
    const run = await laterRun({ parent: folder, name: "once", amount: 100, env });
    expect(run.asked.exitCode, run.asked.output).toBe(3);
    const [waiting] = await records(run.cwd);
    const approved = await runCli(["resume", waiting!.runId, "--approve", ...run.options], {
      cwd: run.cwd,
      env,
    });
    expect(approved.exitCode, approved.stderr).toBe(0);
    const [, resumedRecord] = await records(run.cwd);
    expect(resumedRecord).toMatchObject({
      runId: waiting!.runId,
      resumed: {
        decision: "approved",
        tool: "charge_card",
        argsDigest: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });

    // Removing records from the end leaves a chain that holds: the run waits again, as far as the journal says.
    await rewriteJournal(run.cwd, [waiting!]);
    expect((await runCli(["audit", "verify"], { cwd: run.cwd })).exitCode).toBe(0);
    const again = await runCli(["resume", waiting!.runId, "--approve", ...run.options], {
      cwd: run.cwd,
      env,
    });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/was resumed already \(a state is used once/);
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\ncharge_card ada 100\n");
  });

  it("rough edges (issue 43, 4): the state is checked before any hint, the hints are resume's, a refused resume is journaled with its run id and leaves the run waiting, the reason reaches the program", async () => {
    const env = { CODEACTION_RESUME_SECRET: secret };
    const run = await laterRun({ parent: folder, name: "edges", amount: 100, env });
    expect(run.asked.exitCode, run.asked.output).toBe(3);
    const [waiting] = await records(run.cwd);
    const runId = waiting!.runId;
    // No model options and another key: the signature is what is wrong, and it is said first.
    const otherKey = await runCli(["resume", runId, "--deny"], {
      cwd: run.cwd,
      env: { CODEACTION_RESUME_SECRET: randomBytes(32).toString("hex") },
    });
    expect(otherKey.exitCode).toBe(1);
    expect(otherKey.stderr).toMatch(/signature does not match/);
    expect(otherKey.stderr).not.toMatch(/--replay/);
    // The right key, no model options: the hint is written for resume.
    const noModel = await runCli(["resume", runId, "--deny"], { cwd: run.cwd, env });
    expect(noModel.exitCode).toBe(1);
    expect(noModel.stderr).toContain(`codeaction resume ${runId}: no model is given`);
    expect(noModel.stderr).not.toContain("first-run");
    // Without the ledger server the program's tools differ: refused before it starts, journaled with its run id.
    const [, replay] = run.options.slice(2);
    const otherTools = await runCli(["resume", runId, "--approve", "--replay", replay!], {
      cwd: run.cwd,
      env,
    });
    expect(otherTools.exitCode).toBe(1);
    expect(otherTools.stderr).toMatch(/written against other tools/);
    const [, refused] = await records(run.cwd);
    expect(refused).toMatchObject({
      runId,
      status: "failed",
      resumed: { decision: "approved", refused: "mismatch" },
    });
    // The run still waits; denied with a reason, the program sees it, and so does the record.
    const denied = await runCli(["resume", runId, "--deny", "--reason", "over budget", ...run.options], {
      cwd: run.cwd,
      env,
    });
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(denied.stdout.trim()).toBe("not charged: over budget");
    const [, , resumedRecord] = await records(run.cwd);
    expect(resumedRecord).toMatchObject({
      runId,
      status: "ok",
      resumed: { decision: "denied", reason: "over budget" },
    });
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\n");
  });
});
