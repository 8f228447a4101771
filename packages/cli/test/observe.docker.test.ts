import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./run-cli.ts";

// The CLI's view of a run: `ask --verbose` shows the program's output as it runs and a usage line,
// `chat` shows the output live, and the journal records the usage. As processes, real sandbox,
// replayed model.

let folder = "";
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-cli-observe-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const program =
  'import sys\nprint("counting the rows")\nprint("a warning", file=sys.stderr)\nprint("RESULT: 500")';

async function replay(name: string): Promise<string> {
  const path = join(folder, name);
  const content = `Here is the program.\n\n\`\`\`python\n${program}\n\`\`\``;
  await writeFile(
    path,
    JSON.stringify({ replies: [{ content, usage: { inputTokens: 1800, outputTokens: 60 } }] }),
  );
  return path;
}

describe("codeaction ask --verbose and chat (real sandbox, replayed model)", () => {
  it("ask --verbose: the program's lines on stderr, a usage line, and the usage in the journal", async () => {
    const cwd = await mkdtemp(join(folder, "ask-"));
    const run = await runCli(["ask", "--replay", await replay("ask.json"), "--verbose", "How many orders?"], {
      cwd,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("500\n");
    expect(run.stderr).toContain("│ counting the rows\n");
    expect(run.stderr).toContain("│ stderr: a warning\n");
    expect(run.stderr).toMatch(
      /^usage: 1860 tokens \(1800 in, 60 out\), 1 model call\(s\), 0 tool call\(s\), 1 attempt\(s\), [\d.]+ s in the sandbox$/m,
    );
    const [record] = (await readFile(join(cwd, ".codeaction/runs.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { usage?: Record<string, number> });
    expect(record?.usage).toMatchObject({
      inputTokens: 1800,
      outputTokens: 60,
      totalTokens: 1860,
      modelCalls: 1,
      attempts: 1,
    });

    const quiet = await runCli(
      ["ask", "--replay", await replay("quiet.json"), "--no-journal", "How many orders?"],
      { cwd },
    );
    expect(quiet.exitCode, quiet.stderr).toBe(0);
    expect(quiet.stderr).not.toContain("counting the rows");
    expect(quiet.stderr).not.toContain("usage:");
  });

  it("chat shows the program's lines as it runs", async () => {
    const cwd = await mkdtemp(join(folder, "chat-"));
    const run = await runCli(["chat", "--replay", await replay("chat.json")], {
      cwd,
      input: "How many orders?\n",
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe("500");
    expect(run.stderr).toContain("│ counting the rows\n");
  });
});
