import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inTerminal as inSharedTerminal, ledgerServer } from "./approve-later-session.ts";
import { journalRecords, journalTakes } from "./cli-files.ts";
import { runCli } from "./run-cli.ts";

// Approve later through the CLI, as processes on real containers with a replayed model: `ask
// --approve` answered "later" at the terminal stops the run and keeps its state in the journal; a
// new process, `codeaction resume RUN --approve` (or --deny), continues it. The tools are an MCP
// server that counts its calls on the host, in a file.

const program = `
import json
def value(result):
    return json.loads(result) if isinstance(result, str) else result
account = value(lookup(customer="ada"))
try:
    receipt = value(charge_card(customer="ada", amount=account["balance"]))
    print("RESULT:", receipt["receipt"])
except ToolDenied as denied:
    print("RESULT: not charged:", denied)
`;
const secret = randomBytes(32).toString("hex");
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-approve-later-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A command in a real terminal (approve-later-session.ts), with this file's resume secret. */
function inTerminal(cwd: string, args: string[], steps: Array<[RegExp, string]>) {
  return inSharedTerminal(cwd, args, steps, { CODEACTION_RESUME_SECRET: secret, OPENAI_API_KEY: undefined });
}

/** The journal's second record is run `runId` resumed, answered, with `decision`. */
async function expectResumed(cwd: string, runId: string, decision: "approved" | "denied") {
  const records = await journalRecords<{ runId: string; status: string; resumed?: unknown }>(cwd);
  expect(records[1]).toMatchObject({ runId, status: "ok", resumed: { decision } });
}

async function laterRun(name: string) {
  const cwd = await mkdtemp(join(folder, `${name}-`));
  const ledger = join(cwd, "ledger.txt");
  await writeFile(ledger, "");
  const replay = join(cwd, "replies.json");
  await writeFile(replay, JSON.stringify({ replies: [`\`\`\`python\n${program}\`\`\``] }));
  const options = ["--server", `node ${ledgerServer} ${ledger}`, "--replay", replay];
  const asked = await inTerminal(
    cwd,
    ["ask", "--approve", ...options, "Charge Ada her balance."],
    [
      [/\[y\/N\/later\]/, "y"],
      [/\[y\/N\/later\]/, "later"],
    ],
  );
  return { cwd, ledger, options, asked };
}

describe("codeaction ask --approve, answered later, and codeaction resume", () => {
  it("later stops the run with its state in the journal; resume --approve makes the call once", async () => {
    const { cwd, ledger, options, asked } = await laterRun("approve");
    expect(asked.exitCode, asked.output).toBe(3);
    expect(asked.output).toMatch(/allow lookup \{"customer":"ada"\}\? \[y\/N\/later\]/);
    expect(asked.output, asked.output).toMatch(
      /allow charge_card \{"customer":"ada","amount":42\}\? \[y\/N\/later\]/,
    );
    const [record] = await journalRecords<{ runId: string; status: string; resume?: { pending: unknown } }>(
      cwd,
    );
    expect(record).toMatchObject({ status: "interrupted", resume: { pending: { tool: "charge_card" } } });
    expect(asked.output).toContain(`codeaction resume ${record!.runId} --approve`);
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\n");
    expect((await stat(join(cwd, ".codeaction/runs.jsonl"))).mode & 0o777).toBe(0o600);

    const env = { CODEACTION_RESUME_SECRET: secret };
    const resumed = await runCli(["resume", record!.runId, "--approve", ...options], { cwd, env });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe("r-ada-42");
    // lookup was answered from the log; charge_card was made once, after the approval.
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
    await expectResumed(cwd, record!.runId, "approved");

    // Once: the run's last record is the resumed one.
    const again = await runCli(["resume", record!.runId, "--approve", ...options], { cwd, env });
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toMatch(/does not wait for a decision: its last record .* says "ok"/);
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
  });

  it("two resumes of a run at once: the second is refused while the first holds the run; charge_card is made once", async () => {
    const { cwd, ledger, asked } = await laterRun("race");
    expect(asked.exitCode, asked.output).toBe(3);
    const [record] = await journalRecords<{ runId: string; resume: { state: { nonce: string } } }>(cwd);
    const runId = record!.runId;
    // The same tools, with charge_card held in flight until the file `hold` exists.
    const hold = join(cwd, "hold");
    const options = [
      "--server",
      `node ${ledgerServer} ${ledger} ${hold}`,
      "--replay",
      join(cwd, "replies.json"),
    ];
    const env = { CODEACTION_RESUME_SECRET: secret };
    const first = runCli(["resume", runId, "--approve", ...options], { cwd, env });
    await expect.poll(() => readFile(ledger, "utf8"), { timeout: 90_000 }).toContain("charge_card");
    let secondEnded = false;
    const second = runCli(["resume", runId, "--approve", ...options], { cwd, env }).finally(() => {
      secondEnded = true;
    });
    // Until the second has ended, or (without the take) has made its own charge_card call too.
    const charges = async () => (await readFile(ledger, "utf8")).match(/charge_card/g)?.length ?? 0;
    await expect.poll(async () => secondEnded || (await charges()) > 1, { timeout: 90_000 }).toBe(true);
    await writeFile(hold, "");
    const [firstRun, secondRun] = await Promise.all([first, second]);
    expect(secondRun.exitCode, secondRun.stdout).toBe(1);
    expect(secondRun.stderr).toContain(`Run ${runId} is being resumed by another codeaction resume`);
    // The run was taken once, by the first: the journal's one taken line names it and the state.
    expect(await journalTakes(cwd)).toEqual([
      expect.objectContaining({ runId, nonce: record!.resume.state.nonce, pid: firstRun.pid }),
    ]);
    expect(secondRun.stderr).toContain(`(process ${firstRun.pid}, which took it at`);
    expect(firstRun.exitCode, firstRun.stderr).toBe(0);
    expect(firstRun.stdout.trim()).toBe("r-ada-42");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
    // The take is a line of the journal, not a file: no lock file is left.
    expect((await readdir(join(cwd, ".codeaction"))).filter((name) => name.endsWith(".lock"))).toEqual([]);
  });

  it("resume --deny: the program catches ToolDenied and answers; no call is made; the secret is required", async () => {
    const { cwd, ledger, options, asked } = await laterRun("deny");
    expect(asked.exitCode, asked.output).toBe(3);
    const [record] = await journalRecords<{ runId: string }>(cwd);

    const withoutSecret = await runCli(["resume", record!.runId, "--deny", ...options], {
      cwd,
      env: { CODEACTION_RESUME_SECRET: undefined },
    });
    expect(withoutSecret.exitCode).toBe(1);
    expect(withoutSecret.stderr).toMatch(/codeaction resume needs CODEACTION_RESUME_SECRET/);
    const otherKey = await runCli(["resume", record!.runId, "--deny", ...options], {
      cwd,
      env: { CODEACTION_RESUME_SECRET: randomBytes(32).toString("hex") },
    });
    expect(otherKey.exitCode).toBe(1);
    expect(otherKey.stderr).toMatch(/signature does not match/);

    const denied = await runCli(["resume", record!.runId, "--deny", "--reason", "over budget", ...options], {
      cwd,
      env: { CODEACTION_RESUME_SECRET: secret },
    });
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(denied.stdout.trim()).toBe("not charged: over budget");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\n");
  });
});

/** `chat --approve` in a terminal: `y` for lookup, `later` for charge_card, a second question, `/exit`. */
async function chatLater(name: string) {
  const cwd = await mkdtemp(join(folder, `${name}-`));
  const ledger = join(cwd, "ledger.txt");
  await writeFile(ledger, "");
  const replay = join(cwd, "replies.json");
  const next = 'print("RESULT: still here")\n';
  await writeFile(
    replay,
    JSON.stringify({ replies: [`\`\`\`python\n${program}\`\`\``, `\`\`\`python\n${next}\`\`\``] }),
  );
  const options = ["--server", `node ${ledgerServer} ${ledger}`, "--replay", replay];
  const chat = await inTerminal(
    cwd,
    ["chat", "--approve", ...options],
    [
      [/\? /, "Charge Ada her balance."],
      [/\[y\/N\/later\]/, "y"],
      [/\[y\/N\/later\]/, "later"],
      [/outside this chat[\s\S]*\? /, "And what now?"],
      [/still here[\s\S]*\? /, "/exit"],
    ],
  );
  return { cwd, ledger, options, chat };
}

describe("codeaction chat --approve, answered later, and codeaction resume", () => {
  it("later keeps the turn in the journal and the chat goes on; resume --approve in a new process makes the call once", async () => {
    const { cwd, ledger, options, chat } = await chatLater("chat");
    expect(chat.steps, chat.output).toBe(5);
    expect(chat.exitCode, chat.output).toBe(0);
    expect(chat.output).toMatch(/allow charge_card \{"customer":"ada","amount":42\}\? \[y\/N\/later\]/);
    const [record, ...others] = await journalRecords<{
      runId: string;
      status: string;
      command?: string;
      question: string;
    }>(cwd);
    // Only the turn answered "later" is journaled by chat, with what resume needs.
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      status: "interrupted",
      command: "chat",
      question: "Charge Ada her balance.",
      resume: { pending: { tool: "charge_card" } },
    });
    expect(chat.output).toContain(`codeaction resume ${record!.runId} --approve`);
    expect(chat.output).not.toContain("r-ada-42");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\n");

    const env = { CODEACTION_RESUME_SECRET: secret };
    const resumed = await runCli(["resume", record!.runId, "--approve", ...options], { cwd, env });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe("r-ada-42");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\ncharge_card ada 42\n");
    await expectResumed(cwd, record!.runId, "approved");
  });

  it("resume --deny of a chat turn: the program catches ToolDenied in a new process; charge_card is never called", async () => {
    const { cwd, ledger, options, chat } = await chatLater("chat-deny");
    expect(chat.steps, chat.output).toBe(5);
    expect(chat.exitCode, chat.output).toBe(0);
    const [record] = await journalRecords<{ runId: string; command?: string }>(cwd);
    expect(record).toMatchObject({ status: "interrupted", command: "chat" });

    const env = { CODEACTION_RESUME_SECRET: secret };
    const denied = await runCli(
      ["resume", record!.runId, "--deny", "--reason", "ask finance first", ...options],
      { cwd, env },
    );
    expect(denied.exitCode, denied.stderr).toBe(0);
    expect(denied.stdout.trim()).toBe("not charged: ask finance first");
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\n");
    await expectResumed(cwd, record!.runId, "denied");
    // Denied is decided: the run does not wait any more.
    const again = await runCli(["resume", record!.runId, "--approve", ...options], { cwd, env });
    expect(again.exitCode).toBe(1);
    expect(await readFile(ledger, "utf8")).toBe("lookup ada\n");
  });
});
