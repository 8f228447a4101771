import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot, runCli } from "./run-cli.ts";

// Issue 42 in the CLI, as a process, against a local OpenAI-compatible model fixture: `chat` keeps
// one live interpreter per conversation (--no-state: none), `ask --steps N` lets the model look
// before it answers.

const orders = join(repositoryRoot, "examples/data/orders.csv");
const reply = (program: string) => `\`\`\`python\n${program}\n\`\`\``;
const q3 = 'q3 = [o for o in load_orders() if "2026-07-01" <= o["date"] <= "2026-09-30"]';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-cli-threads-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function chat(
  args: string[],
  questions: string[],
  programs: string[],
  env: Record<string, string> = {},
) {
  const cwd = await mkdtemp(join(folder, "chat-"));
  const fixture = await startOpenAIFixture({ replies: programs.map(reply) });
  try {
    const run = await runCli(["chat", "--csv", orders, "--model", "openai:gpt-5-mini", ...args], {
      cwd,
      input: `${questions.join("\n")}\n`,
      env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: fixture.baseURL, ...env },
      timeoutMs: 200_000,
    });
    return { run, requests: fixture.requests, cwd };
  } finally {
    await fixture.close();
  }
}

const followUp = ["How many Q3 orders?", "And how many of them in EMEA?"];
const followUpPrograms = [
  `${q3}\nprint(f"RESULT: {len(q3)}")`,
  // No load: the follow-up reads what the first question's program left in the interpreter.
  "print(f\"RESULT: {sum(1 for o in q3 if o['region'] == 'EMEA')}\")",
];

describe("codeaction chat: one live interpreter per conversation", () => {
  it("a follow-up reads the variable the first question's program set; its prompt says what the interpreter holds", async () => {
    const { run, requests } = await chat([], followUp, followUpPrograms);
    expect(run.exitCode, run.stderr).toBe(0);
    const answers = run.stdout.trim().split("\n");
    expect(answers[0]).toBe("166");
    expect(Number(answers[1])).toBeGreaterThan(0);
    expect(JSON.stringify(requests[1]?.body.messages)).toContain("q3: list len 166");
  }, 240_000);

  it("--no-state: each question starts from nothing, so the same follow-up fails", async () => {
    const { run } = await chat(["--no-state"], followUp, [...followUpPrograms, followUpPrograms[1]!]);
    expect(run.stdout.trim().split("\n")[0]).toBe("166");
    expect(run.stderr).toContain("NameError");
  }, 240_000);

  it("with CODEACTION_RESUME_SECRET the thread is kept signed under .codeaction/threads", async () => {
    const { run, cwd } = await chat([], followUp, followUpPrograms, {
      CODEACTION_RESUME_SECRET: "0123456789abcdef0123456789abcdef",
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const kept = await readdir(join(cwd, ".codeaction", "threads"));
    expect(kept.filter((name) => name.endsWith(".thread.json"))).toHaveLength(1);
  }, 240_000);
});

describe("codeaction ask --steps", () => {
  it("the model looks at the rows in step 1 and answers in step 2 from what step 1 loaded", async () => {
    const cwd = await mkdtemp(join(folder, "ask-"));
    const fixture = await startOpenAIFixture({
      replies: [reply(`${q3}\nprint("columns:", sorted(q3[0]))`), reply('print(f"RESULT: {len(q3)}")')],
    });
    try {
      const run = await runCli(
        ["ask", "--csv", orders, "--model", "openai:gpt-5-mini", "--steps", "2", "How many Q3 orders?"],
        { cwd, env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: fixture.baseURL }, timeoutMs: 120_000 },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe("166");
      const second = JSON.stringify(fixture.requests[1]?.body.messages);
      expect(second).toContain("Step 1 ran");
      expect(second).toContain("columns:");
    } finally {
      await fixture.close();
    }
    // The journal's record replays both steps in one interpreter, the model gone: the answering
    // program reads q3, which only step 1 set (replayed alone it would fail with a NameError).
    const replayed = await runCli(["replay"], { cwd, timeoutMs: 120_000 });
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(replayed.stdout).toMatch(
      /^reproduced: run \S+, 0 tool call\(s\) answered from the log, the same RESULT: 166/,
    );
  }, 240_000);

  it("refuses --steps that is not a whole number from 1 to 50", async () => {
    const run = await runCli(["ask", "--steps", "0", "x"], { cwd: folder, timeoutMs: 30_000 });
    expect(run.exitCode).not.toBe(0);
    expect(run.stderr).toContain("--steps");
  });
});
