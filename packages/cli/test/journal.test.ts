import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { everythingServer } from "./reference-servers.ts";
import { repositoryRoot } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// The run journal as a user meets it, through the CLI process (the tools pattern over a replayed
// or fixture model, no Docker): secrets redacted, the file private and never a link, rotation at
// a size cap, the chain `codeaction audit verify` checks, and file names escaped on the terminal.

vi.setConfig({ testTimeout: 120_000, hookTimeout: 300_000 });

const orders = join(repositoryRoot, "examples/data/orders.csv");
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-journal-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function replay(name: string, replies: unknown[]): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, JSON.stringify({ replies }));
  return path;
}

/** One `ask` in the tools pattern over a one-reply replay, in `cwd`. */
async function askOnce(cwd: string, question: string, env: Record<string, string | undefined> = {}) {
  const file = await replay(`answer-${question.replace(/\W/g, "")}.json`, [`Answer to ${question}.`]);
  return runMain(["ask", "--pattern", "tools", "--replay", file, question], { cwd, env });
}

async function journalLines(path: string): Promise<string[]> {
  return (await readFile(path, "utf8")).trimEnd().split("\n");
}

describe("the journal keeps no secrets", () => {
  it("redacts an environment assignment in --server and the query string of OPENAI_BASE_URL, in the journal and --json", async () => {
    const fixture = await startOpenAIFixture({
      replies: [{ content: "", toolCalls: [{ name: "load_orders", args: { limit: 1 } }] }, "One order."],
    });
    try {
      const cwd = await mkdtemp(join(folder, "secrets-"));
      const run = await runMain(
        [
          "ask",
          "--pattern",
          "tools",
          "--csv",
          orders,
          "--server",
          `GITHUB_TOKEN=ghp_journalsecret123 ${everythingServer}`,
          "--json",
          "How many orders?",
        ],
        {
          cwd,
          env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${fixture.baseURL}?api-key=sk-querysecret` },
        },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      const text = await readFile(join(cwd, ".codeaction/runs.jsonl"), "utf8");
      for (const shown of [text, run.stdout, run.stderr]) {
        expect(shown).not.toContain("ghp_journalsecret123");
        expect(shown).not.toContain("sk-querysecret");
      }
      const record = JSON.parse(text);
      expect(record.model.baseUrl).toBe(`${fixture.baseURL}?[redacted]`);
      expect(Object.values(record.servers)).toEqual([`GITHUB_TOKEN=[redacted] ${everythingServer}`]);
      expect(record.answer).toBe("One order.");
    } finally {
      await fixture.close();
    }
  });
});

describe("the journal's file", () => {
  it("is created 0600 in a 0700 folder, and an older 0644 journal is made 0600", async () => {
    const cwd = await mkdtemp(join(folder, "modes-"));
    const run = await askOnce(cwd, "first");
    expect(run.exitCode, run.stderr).toBe(0);
    expect((await stat(join(cwd, ".codeaction"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(cwd, ".codeaction/runs.jsonl"))).mode & 0o777).toBe(0o600);

    const older = join(cwd, "older/runs.jsonl");
    await mkdir(join(cwd, "older"));
    await writeFile(older, "");
    await chmod(older, 0o644);
    const again = await runMain(
      [
        "ask",
        "--pattern",
        "tools",
        "--replay",
        await replay("again.json", ["Yes."]),
        "--journal",
        older,
        "q",
      ],
      { cwd },
    );
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await stat(older)).mode & 0o777).toBe(0o600);
  });

  it("refuses a planted symbolic link, as the file or as its folder, with the fix, and writes nothing through it", async () => {
    const cwd = await mkdtemp(join(folder, "link-"));
    const target = join(cwd, "elsewhere.txt");
    await writeFile(target, "");
    await chmod(target, 0o644);
    await mkdir(join(cwd, ".codeaction"), { mode: 0o700 });
    await symlink(target, join(cwd, ".codeaction/runs.jsonl"));
    const run = await askOnce(cwd, "linked");
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/runs\.jsonl: it is a symbolic link, and codeaction does not follow links/);
    expect(run.stderr).toMatch(/--no-journal/);
    expect(await readFile(target, "utf8")).toBe("");
    expect((await stat(target)).mode & 0o777).toBe(0o644);

    const other = await mkdtemp(join(folder, "link-folder-"));
    const outside = await mkdtemp(join(folder, "outside-"));
    await symlink(outside, join(other, ".codeaction"));
    const linkedFolder = await askOnce(other, "linked folder");
    expect(linkedFolder.exitCode).toBe(1);
    expect(linkedFolder.stderr).toMatch(/its folder .*\.codeaction is a symbolic link/);
    await expect(lstat(join(outside, "runs.jsonl"))).rejects.toThrow(/ENOENT/);
  });

  it("rotates at CODEACTION_JOURNAL_MAX_BYTES, keeping CODEACTION_JOURNAL_KEEP files, the chain going on across them", async () => {
    const cwd = await mkdtemp(join(folder, "rotate-"));
    // A record is about 520 bytes: one a file, so the fourth run drops the first.
    const env = { CODEACTION_JOURNAL_MAX_BYTES: "700", CODEACTION_JOURNAL_KEEP: "2" };
    for (const question of ["one", "two", "three", "four"]) {
      const run = await askOnce(cwd, question, env);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    const current = join(cwd, ".codeaction/runs.jsonl");
    const rotated = join(cwd, ".codeaction/runs.1.jsonl");
    for (const path of [current, rotated, join(cwd, ".codeaction/runs.2.jsonl")]) {
      expect((await stat(path)).size).toBeLessThanOrEqual(700);
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    }
    await expect(stat(join(cwd, ".codeaction/runs.3.jsonl"))).rejects.toThrow(/ENOENT/);
    // The new file's first record links to the rotated file's last.
    const lastRotated = JSON.parse((await journalLines(rotated)).at(-1)!);
    const firstCurrent = JSON.parse((await journalLines(current))[0]!);
    expect(firstCurrent.chain).toMatchObject({ seq: lastRotated.chain.seq + 1, prev: lastRotated.tag });

    const verify = await runMain(["audit", "verify"], { cwd });
    expect(verify.exitCode, verify.stdout).toBe(0);
    expect(verify.stdout).toMatch(/the chain holds: 3 records in 3 files/);
    expect(verify.stdout).toMatch(
      /the chain starts at record 2: the records before it were in rotated files/,
    );
  });
});

describe("codeaction audit verify", () => {
  let cwd: string;
  let lines: string[];

  beforeAll(async () => {
    cwd = await mkdtemp(join(folder, "audit-"));
    for (const question of ["alpha", "beta", "gamma", "delta"]) {
      const run = await askOnce(cwd, question);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    lines = await journalLines(join(cwd, ".codeaction/runs.jsonl"));
  });

  async function verifyEdited(name: string, edited: string[]) {
    await writeFile(join(cwd, name), `${edited.join("\n")}\n`);
    return runMain(["audit", "verify", name], { cwd });
  }

  it("passes on the untouched journal, naming the last record and what the hash chain proves", async () => {
    const run = await runMain(["audit", "verify"], { cwd });
    expect(run.exitCode, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/the chain holds: 4 records/);
    expect(run.stdout).toContain(`last record: 4, tag ${JSON.parse(lines[3]!).tag}`);
    expect(run.stdout).toMatch(/SHA-256 hashes \(no CODEACTION_JOURNAL_KEY\)/);
  });

  it("names the record when one byte is changed", async () => {
    const changed = [...lines];
    changed[1] = changed[1]!.replace('"question":"beta"', '"question":"bets"');
    const run = await verifyEdited("changed.jsonl", changed);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/record 2 \(run run_\w+\) at .*changed\.jsonl line 2 was changed/);
  });

  it("names the record that was removed", async () => {
    const run = await verifyEdited("removed.jsonl", [lines[0]!, lines[2]!, lines[3]!]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/record 2 was removed: .*removed\.jsonl line 2 holds record 3/);
  });

  it("names two records swapped", async () => {
    const run = await verifyEdited("swapped.jsonl", [lines[0]!, lines[2]!, lines[1]!, lines[3]!]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(
      /records were reordered: .*swapped\.jsonl line 2 holds record 3 where record 2 belongs; record 2 is at .*line 3/,
    );
  });

  it("names a record inserted by someone who recomputed its hash, at the record after it", async () => {
    const { createHash } = await import("node:crypto");
    const forgedBody = JSON.parse(lines[1]!);
    forgedBody.answer = "Forged.";
    delete forgedBody.tag;
    const body = JSON.stringify(forgedBody);
    const forged = `${body.slice(0, -1)},"tag":"${createHash("sha256").update(body).digest("hex")}"}`;
    const run = await verifyEdited("forged.jsonl", [lines[0]!, forged, lines[2]!, lines[3]!]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(
      /record 3 \(run run_\w+\) at .*forged\.jsonl line 3 does not link to the record before it \(.*line 2\)/,
    );
  });

  it("with CODEACTION_JOURNAL_KEY: HMAC tags that pass with the key, fail with another, and a plain-hash record is refused", async () => {
    const keyed = await mkdtemp(join(folder, "keyed-"));
    const key = { CODEACTION_JOURNAL_KEY: "journal-key-for-tests" };
    for (const question of ["one", "two"]) {
      const run = await askOnce(keyed, question, key);
      expect(run.exitCode, run.stderr).toBe(0);
    }
    const good = await runMain(["audit", "verify"], { cwd: keyed, env: key });
    expect(good.exitCode, good.stdout).toBe(0);
    expect(good.stdout).toMatch(/HMAC-SHA256 with CODEACTION_JOURNAL_KEY/);
    const wrong = await runMain(["audit", "verify"], {
      cwd: keyed,
      env: { CODEACTION_JOURNAL_KEY: "another" },
    });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stdout).toMatch(/record 1 .* was changed/);
    const none = await runMain(["audit", "verify"], { cwd: keyed });
    expect(none.exitCode).toBe(1);
    expect(none.stdout).toMatch(/set CODEACTION_JOURNAL_KEY/);
    // The unkeyed journal, checked with a key: its plain hashes prove nothing about who wrote them.
    const unsigned = await runMain(["audit", "verify"], { cwd, env: key });
    expect(unsigned.exitCode).toBe(1);
    expect(unsigned.stdout).toMatch(/record 1 .* is not signed with the key/);
  });

  it("refuses a rotated file that is a symbolic link, naming it and the fix (without this check the chain held)", async () => {
    const planted = await mkdtemp(join(folder, "planted-"));
    await mkdir(join(planted, ".codeaction"), { mode: 0o700 });
    const outside = join(planted, "elsewhere.jsonl");
    await writeFile(outside, `${lines.slice(0, 2).join("\n")}\n`);
    await symlink(outside, join(planted, ".codeaction/runs.1.jsonl"));
    await writeFile(join(planted, ".codeaction/runs.jsonl"), `${lines.slice(2).join("\n")}\n`, {
      mode: 0o600,
    });
    const run = await runMain(["audit", "verify"], { cwd: planted });
    expect(run.exitCode, run.stdout).toBe(1);
    expect(run.stderr).toMatch(
      /The journal file .*runs\.1\.jsonl is a symbolic link, and codeaction does not follow links .* Remove it \(rm .*runs\.1\.jsonl\)/,
    );
  });

  it("says where no journal is", async () => {
    const run = await runMain(["audit", "verify", "missing.jsonl"], { cwd });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/No journal at .*missing\.jsonl/);
  });
});

describe("file names on the terminal", () => {
  it("shows a data file's escape sequences as text in the progress lines", async () => {
    const cwd = await mkdtemp(join(folder, "names-"));
    const hostile = join(cwd, "\u001b]0;PWNED\u0007\u001b[31mred.csv");
    await writeFile(hostile, "a,b\n1,2\n");
    const file = await replay("names.json", ["Fine."]);
    const run = await runMain(["ask", "--pattern", "tools", "--csv", hostile, "--replay", file, "q"], {
      cwd,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/reading .*\\x1b\]0;PWNED\\x07\\x1b\[31mred\.csv/);
    expect(run.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
