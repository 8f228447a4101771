import { spawn, spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ChainEnd, chainEndOf, chainedLine } from "@codeaction/core/durable";
import { currentOwner } from "@codeaction/sandbox/internal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendToJournal } from "../src/journal/append.ts";
import { createJournalStore, takerGone } from "../src/journal/journal-store.ts";
import type { JournalTaker } from "../src/journal/taken-record.ts";

// The journal as the store `codeaction resume` takes a waiting run from (journal-store.ts): a run
// is handed out once, to one live process; a take ends with the run's next record or its process;
// the taken lines are chained like every record. Real files, real processes for the liveness.

const secret = randomBytes(32).toString("hex");
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-journal-store-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A plain JSON value with every object's keys sorted: its JSON is the canonical JSON a state is signed over. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).sort(([left], [right]) => (left < right ? -1 : 1));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortedKeys(item)]));
}

/** A signed state of run `runId`, waiting on charge_card, as ask keeps it (verifyState checks the signature). */
function waitingState(runId: string) {
  const pending = { sequence: 1, tool: "charge_card", args: { customer: "ada", amount: 42 } };
  const content = {
    format: "codeaction.run-state",
    version: 1,
    runId,
    nonce: randomBytes(16).toString("hex"),
    seed: "1",
    messages: [{ role: "user", content: "Charge Ada." }],
    modelMessages: [],
    attempt: { number: 1, program: "charge_card(customer='ada', amount=42)", modelReply: "" },
    callLog: [],
    pending,
    settings: { execTimeout: 30, maxToolCalls: 100, maxRepairs: 2 },
    tools: { names: ["charge_card"], digest: "0".repeat(64) },
  };
  const signature = createHmac("sha256", secret)
    .update(JSON.stringify(sortedKeys(content)))
    .digest("hex");
  return { pending, state: { ...content, signature } };
}

/** A journal in a new folder holding run `runId` waiting (its interrupted record), and its path. */
async function journalWithWaitingRun(runId: string, env: NodeJS.ProcessEnv = {}) {
  const cwd = await mkdtemp(join(folder, "journal-"));
  const path = join(cwd, ".codeaction/runs.jsonl");
  const kept = waitingState(runId);
  const record = { version: 1, runId, status: "interrupted", question: "Charge Ada.", resume: kept };
  await appendToJournal(path, record, env);
  return { path, nonce: kept.state.nonce! };
}

async function lines(path: string): Promise<Record<string, unknown>[]> {
  return (await readFile(path, "utf8"))
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The pid of a process that ran and is gone. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
  return Number(child.stdout.trim());
}

const alive = () => false;
const store = (path: string, taker: Partial<JournalTaker> & { pid: number }, env: NodeJS.ProcessEnv = {}) =>
  createJournalStore(path, { env, secret, taker, takerGone: alive });

describe("the journal's take", () => {
  it("hands the state out once: a taken line names the run, the state's nonce and the taker; a second take is refused while the taker lives", async () => {
    const { path, nonce } = await journalWithWaitingRun("run_once");
    const taken = await store(path, { pid: 1234, start: "99" }).take("run_once");
    expect(taken).toMatchObject({ runId: "run_once", question: "Charge Ada.", state: { nonce } });
    const [, line] = await lines(path);
    expect(line).toMatchObject({
      taken: { runId: "run_once", nonce, pid: 1234, start: "99" },
      chain: { seq: 2 },
    });
    await expect(store(path, { pid: 5678 }).take("run_once")).rejects.toThrow(
      /Run run_once is being resumed by another codeaction resume \(process 1234, which took it at .*\): a run is resumed by one process at a time.*kill 1234/,
    );
    expect(await lines(path)).toHaveLength(2);
  });

  it("of two takes at once (two stores, two live takers), exactly one gets the run", async () => {
    const { path } = await journalWithWaitingRun("run_race");
    const results = await Promise.allSettled([
      store(path, { pid: 1 }).take("run_race"),
      store(path, { pid: 2 }).take("run_race"),
    ]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    const [refused] = results.filter((result) => result.status === "rejected");
    expect(String(refused?.reason)).toMatch(/is being resumed by another codeaction resume/);
    expect((await lines(path)).filter((line) => line.taken !== undefined)).toHaveLength(1);
  });

  it("a run taken by a process that is gone (never answered) is taken again", async () => {
    const { path } = await journalWithWaitingRun("run_crashed");
    const gone = deadPid();
    await store(path, { ...currentOwner(), pid: gone }).take("run_crashed");
    // The default check: no process has that pid any more.
    const again = createJournalStore(path, { env: {}, secret, taker: currentOwner() });
    await expect(again.take("run_crashed")).resolves.toMatchObject({ runId: "run_crashed" });
    const takes = (await lines(path)).flatMap((line) => (line.taken ? [line.taken] : []));
    expect(takes).toMatchObject([{ pid: gone }, { pid: process.pid }]);
  });

  it("an answered run is refused as resumed already, whoever took it; a refused resume ends its take", async () => {
    const { path } = await journalWithWaitingRun("run_answered");
    await store(path, { pid: 1 }).take("run_answered");
    // A refusal before the program started is journaled with the run id: the run waits again.
    await appendToJournal(
      path,
      { version: 1, runId: "run_answered", status: "failed", resumed: { refused: "mismatch" } },
      {},
    );
    await expect(store(path, { pid: 2 }).take("run_answered")).resolves.toMatchObject({
      runId: "run_answered",
    });
    await appendToJournal(path, { version: 1, runId: "run_answered", status: "ok" }, {});
    await expect(store(path, { pid: 3 }).take("run_answered")).rejects.toThrow(
      /Run run_answered does not wait for a decision: its last record .* says "ok"/,
    );
  });
});

/** Writes `records` as the journal, its SHA-256 chain rebuilt from the first (what anyone can do without a key). */
async function rewriteChain(path: string, records: Record<string, unknown>[]): Promise<void> {
  let end: ChainEnd | undefined;
  let text = "";
  for (const { chain: _chain, tag: _tag, ...record } of records) {
    const line = chainedLine(record, end, undefined);
    end = chainEndOf(line);
    text += `${line}\n`;
  }
  await writeFile(path, text);
}

describe("a taken line is chained like every record", () => {
  it("a taken line edited (its pid made a dead one's) is refused by the chain check; nothing is taken", async () => {
    const { path } = await journalWithWaitingRun("run_edited");
    await store(path, { pid: process.pid }).take("run_edited");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace(`"pid":${process.pid}`, `"pid":${deadPid()}`));
    const again = createJournalStore(path, { env: {}, secret, taker: currentOwner() });
    await expect(again.take("run_edited")).rejects.toThrow(
      /codeaction resume refused: the journal .* does not hold as it was written/,
    );
    expect(await lines(path)).toHaveLength(2);
  });

  it("with CODEACTION_JOURNAL_KEY, a taken line removed and the chain rebuilt without the key is refused", async () => {
    const env = { CODEACTION_JOURNAL_KEY: randomBytes(32).toString("hex") };
    const { path } = await journalWithWaitingRun("run_keyed", env);
    await store(path, { pid: process.pid }, env).take("run_keyed");
    const [waiting] = await lines(path);
    await rewriteChain(path, [waiting!]);
    await expect(store(path, { pid: 2 }, env).take("run_keyed")).rejects.toThrow(
      /does not hold as it was written/,
    );
  });
});

describe("the taker's liveness", () => {
  it("a running process is not gone; killed, it is; its pid with another start time is gone (the pid was reused)", async () => {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    const taker = { ...currentOwner(), pid: child.pid!, start: await startOf(child.pid!) };
    const take = { ...taker, runId: "run_1", nonce: "n", at: "" };
    expect(takerGone(take)).toBe(false);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    expect(takerGone(take)).toBe(true);
    const self = { ...currentOwner(), runId: "run_1", nonce: "n", at: "" };
    expect(takerGone(self)).toBe(false);
    expect(takerGone({ ...self, start: `${Number(self.start) + 1}` })).toBe(true);
    // Another machine's taker cannot be judged from here: it does not hold the run (the nonce's single use does).
    expect(takerGone({ ...self, host: "elsewhere.invalid", bootId: "another-boot" })).toBe(true);
  });
});

/** A process's start time as /proc shows it (field 22 of its stat). */
async function startOf(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}
