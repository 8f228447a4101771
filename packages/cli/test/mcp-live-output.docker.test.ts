import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { filesystemServer } from "./reference-servers.ts";
import { binPath, repositoryRoot } from "./run-cli.ts";

// Issue 33: `codeaction mcp` sends the program's output lines as progress notifications while the
// program runs, to a client that asked for progress. As a process over stdio, with the official SDK
// client and the reference filesystem server from npm as the program's tool (the handshake's gate).

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-live-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function stdioClient(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [binPath, "mcp", ...args],
    env: process.env as Record<string, string>,
    cwd: repositoryRoot,
    stderr: "ignore",
  });
  const client = new Client({ name: "codeaction-live-output-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

type OutputMeta = { stream: string; line: string; cut?: boolean };
const outputOf = (progress: Progress) =>
  (progress as { _meta?: Record<string, unknown> })._meta?.["codeaction/output"] as OutputMeta | undefined;
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("codeaction mcp: the program's output as progress notifications", () => {
  it("sends the first line while the program runs: the program waits until the client has seen it", async () => {
    // The handshake: the program prints, sleeps 1 s, then waits (polling the filesystem server,
    // at most about 30 s) for a file the test writes only when the first line's notification has
    // arrived; then it prints again. Without live output the gate never opens.
    const gate = join(folder, "gate");
    const program = [
      "import time",
      'print("first line")',
      "time.sleep(1)",
      "opened = False",
      "for _ in range(100):",
      `    if "gate" in str(list_directory(path=${JSON.stringify(folder)})):`,
      "        opened = True",
      "        break",
      "    time.sleep(0.3)",
      'print("second line")',
      'print("RESULT:", "opened" if opened else "never opened")',
    ].join("\n");
    const client = await stdioClient(["--server", filesystemServer(folder), "--max-tool-calls", "120"]);
    try {
      const seen: { message: string | undefined; output: OutputMeta | undefined; progress: number }[] = [];
      const ran = (await client.callTool({ name: "run_program", arguments: { program } }, undefined, {
        timeout: 60_000,
        onprogress: (progress) => {
          const output = outputOf(progress);
          seen.push({ message: progress.message, output, progress: progress.progress });
          if (output?.line === "first line") void writeFile(gate, "open");
        },
      })) as CallToolResult;
      expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
      expect(textOf(ran)).toBe("opened");
      const lines = seen.filter((notification) => notification.output !== undefined);
      expect(lines.map((notification) => notification.message)).toEqual([
        "stdout: first line",
        "stdout: second line",
        "stdout: RESULT: opened",
      ]);
      expect(lines[0]?.output).toEqual({ stream: "stdout", line: "first line" });
      // Every notification's progress grows, ticks and lines together.
      const values = seen.map((notification) => notification.progress);
      expect(new Set(values).size).toBe(values.length);
      expect(values).toEqual([...values].sort((left, right) => left - right));
    } finally {
      await client.close();
    }
  });

  it("bounds them: 5000 lines give at most 2000 notifications and one 'output cut' line; none without a progressToken", async () => {
    const program =
      'import sys\nfor index in range(5000):\n    print("line", index)\nprint("x" * 10, file=sys.stderr)\nprint("RESULT: done")';
    const client = await stdioClient(["--server", filesystemServer(folder)]);
    try {
      const lines: OutputMeta[] = [];
      const ran = (await client.callTool({ name: "run_program", arguments: { program } }, undefined, {
        onprogress: (progress) => {
          const output = outputOf(progress);
          if (output) lines.push(output);
        },
      })) as CallToolResult;
      expect(textOf(ran)).toBe("done");
      expect(lines.length).toBe(2001);
      expect(lines[1999]).toEqual({ stream: "stdout", line: "line 1999" });
      expect(lines[2000]).toMatchObject({ cut: true, line: expect.stringMatching(/^\[output cut: /) });

      // No progressToken (no onprogress): the client is sent no notification at all (a progress
      // notification for a request without a handler reaches onerror as an unknown token).
      let notifications = 0;
      client.fallbackNotificationHandler = async () => {
        notifications += 1;
      };
      client.onerror = () => {
        notifications += 1;
      };
      const quiet = (await client.callTool({
        name: "run_program",
        arguments: { program },
      })) as CallToolResult;
      expect(textOf(quiet)).toBe("done");
      expect(notifications).toBe(0);
    } finally {
      await client.close();
    }
  });
});
