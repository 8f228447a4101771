import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { currentOwner } from "@codeaction/sandbox/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendToJournal } from "../src/journal/append.ts";
import { takenRecord } from "../src/journal/taken-record.ts";
import { laterRun, ledgerServer } from "./approve-later-session.ts";
import { journalRecords, journalTakes } from "./cli-files.ts";
import { runCli } from "./run-cli.ts";

// `codeaction resume` takes its run from the journal (journal-store.ts): a take whose process is
// gone does not hold the run, so a crashed resume does not leave it stuck. As processes on real
// containers, the tools counted on the host in a ledger file.

const secret = randomBytes(32).toString("hex");
const env = { CODEACTION_RESUME_SECRET: secret };
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-resume-take-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

type Waiting = { runId: string; resume: { state: { nonce: string } } };

/** The pid of a process that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

describe("codeaction resume of a run taken by a process that is gone", () => {
  it("taken by a resume that died before it started the run: taken again, charge_card made once", async () => {
    const run = await laterRun({ parent: folder, name: "dead-taker", amount: 42, env });
    expect(run.asked.exitCode, run.asked.output).toBe(3);
    const [waiting] = await journalRecords<Waiting>(run.cwd);
    const { runId } = waiting!;
    // What a resume killed right after its take leaves: a taken line, through the journal's own append.
    const gone = deadPid();
    const journal = join(run.cwd, ".codeaction/runs.jsonl");
    const taker = { ...currentOwner(), pid: gone };
    await appendToJournal(journal, takenRecord(runId, waiting!.resume.state.nonce, taker), {});

    const resumed = await runCli(["resume", runId, "--approve", ...run.options], { cwd: run.cwd, env });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe("r-ada-42");
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
    expect((await journalTakes(run.cwd)).map((take) => take.pid)).toEqual([gone, resumed.pid]);
    expect((await runCli(["audit", "verify"], { cwd: run.cwd })).exitCode).toBe(0);
  });

  it("a resume killed while its call is in flight: the next is not held off by the dead take, and is refused as used; charge_card once", async () => {
    const run = await laterRun({ parent: folder, name: "killed", amount: 42, env });
    expect(run.asked.exitCode, run.asked.output).toBe(3);
    const [waiting] = await journalRecords<Waiting>(run.cwd);
    const { runId } = waiting!;
    const hold = join(run.cwd, "hold");
    const held = ["--server", `node ${ledgerServer} ${run.ledger} ${hold}`, ...run.options.slice(2)];
    const first = runCli(["resume", runId, "--approve", ...held], { cwd: run.cwd, env });
    await expect.poll(() => readFile(run.ledger, "utf8"), { timeout: 90_000 }).toContain("charge_card");
    const [take] = await journalTakes(run.cwd);
    process.kill(take!.pid, "SIGKILL");
    const killed = await first;
    expect(killed.pid).toBe(take!.pid);
    await writeFile(hold, "");

    const again = await runCli(["resume", runId, "--approve", ...run.options], { cwd: run.cwd, env });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).not.toContain("is being resumed by another codeaction resume");
    expect(again.stderr).toMatch(/was resumed already \(a state is used once/);
    expect(await readFile(run.ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
    expect((await journalTakes(run.cwd)).map((line) => line.pid)).toEqual([killed.pid, again.pid]);
  });
});
