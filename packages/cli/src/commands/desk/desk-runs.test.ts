import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendToJournal } from "../../journal/append.ts";
import { journalTailBytes, maxPastRuns, readPastRuns } from "./desk-runs.ts";

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-desk-runs-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const record = (index: number, command?: "desk") => ({
  version: 1,
  runId: `run_${index}`,
  startedAt: `2026-12-02T01:00:${String(index % 60).padStart(2, "0")}.000Z`,
  question: `question ${index}`,
  status: index % 2 === 0 ? "ok" : "failed",
  ...(index % 2 === 0 ? { answer: `answer ${index}` } : { error: { message: `error ${index}` } }),
  timings: { totalMs: index },
  ...(command ? { command } : {}),
});

describe("the desk's past runs from the journal", () => {
  it("lists the desk's records (not those of ask), newest first, as the journal chains them", async () => {
    const journal = join(folder, "a", "runs.jsonl");
    await appendToJournal(journal, record(1, "desk"), {});
    await appendToJournal(journal, record(2), {});
    await appendToJournal(journal, record(3, "desk"), {});
    await appendToJournal(journal, record(4, "desk"), {});
    expect(await readPastRuns(journal)).toEqual([
      {
        runId: "run_4",
        startedAt: "2026-12-02T01:00:04.000Z",
        question: "question 4",
        status: "ok",
        answer: "answer 4",
        totalMs: 4,
      },
      {
        runId: "run_3",
        startedAt: "2026-12-02T01:00:03.000Z",
        question: "question 3",
        status: "failed",
        error: "error 3",
        totalMs: 3,
      },
      {
        runId: "run_1",
        startedAt: "2026-12-02T01:00:01.000Z",
        question: "question 1",
        status: "failed",
        error: "error 1",
        totalMs: 1,
      },
    ]);
  });

  it("none without a journal; never through a link; at most the last runs of the journal's tail", async () => {
    expect(await readPastRuns(join(folder, "missing.jsonl"))).toEqual([]);
    const target = join(folder, "target.jsonl");
    await writeFile(target, `${JSON.stringify(record(1, "desk"))}\n`);
    await symlink(target, join(folder, "link.jsonl"));
    await expect(readPastRuns(join(folder, "link.jsonl"))).rejects.toThrow(/ELOOP|EMLINK/);
    // A journal bigger than the tail read: the cut first line is skipped, the newest are kept.
    const padding = "x".repeat(4096);
    const lines: string[] = [];
    for (let index = 0; index < journalTailBytes / 4096 + 10; index += 1) {
      lines.push(JSON.stringify({ ...record(index, "desk"), padding }));
    }
    const big = join(folder, "big.jsonl");
    await writeFile(big, `${lines.join("\n")}\n`);
    const runs = await readPastRuns(big);
    expect(runs).toHaveLength(maxPastRuns);
    expect(runs[0]!.runId).toBe(`run_${lines.length - 1}`);
  });
});
