import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath, repositoryRoot } from "../../packages/cli/test/run-cli.ts";

// Issue 29, finding 3, over stdio: `codeaction mcp` as a process and the official SDK client. A
// client that sends many run_program calls at once gets error results past the server's cap (20
// runs running or waiting), not an unbounded queue of programs held in memory.

let folder: string;
let csvPath: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-stdio-bounds-"));
  csvPath = join(folder, "numbers.csv");
  await writeFile(csvPath, "value\n1\n");
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("codeaction mcp over stdio: at most 20 runs running or waiting (finding 3)", () => {
  it("answers the calls past 20 with an error result at once, and serves again when runs end", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [binPath, "mcp", "--csv", csvPath],
      env: process.env as Record<string, string>,
      cwd: repositoryRoot,
      stderr: "pipe",
    });
    const client = new Client({ name: "codeaction-stdio-flood", version: "1.0.0" });
    await client.connect(transport);
    const cancel = new AbortController();
    try {
      // 24 programs that would sleep far past any test: they can only end by being cancelled.
      const sleeper = "import time\ntime.sleep(600)\nprint('RESULT: late')";
      const calls = Array.from({ length: 24 }, () =>
        client.callTool({ name: "run_program", arguments: { program: sleeper } }, undefined, {
          signal: cancel.signal,
          timeout: 600_000,
        }),
      );
      const settled: CallToolResult[] = [];
      for (const call of calls) {
        call.then(
          (result) => settled.push(result as CallToolResult),
          () => undefined,
        );
      }
      await expect.poll(() => settled.length, { timeout: 60_000 }).toBe(4);
      for (const refused of settled) {
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(
          /^This connection already has 20 programs running or waiting, the most one connection may have \(20\)/,
        );
      }
      // Cancelled (notifications/cancelled), the 20 runs end and give their places back.
      cancel.abort();
      await Promise.allSettled(calls);
      await expect
        .poll(
          async () => {
            const result = (await client.callTool({
              name: "run_program",
              arguments: { program: "print('RESULT: served')" },
            })) as CallToolResult;
            return textOf(result);
          },
          { timeout: 90_000, interval: 500 },
        )
        .toBe("served");
    } finally {
      cancel.abort();
      await client.close();
    }
  });
});
