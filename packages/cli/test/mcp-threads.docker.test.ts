import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, startMcpHttp } from "./mcp-http-process.ts";
import { filesystemServer } from "./reference-servers.ts";
import { binPath, repositoryRoot } from "./run-cli.ts";

// Issue 42: `codeaction mcp`'s run_program takes an optional `thread`, so a client keeps state
// between its calls. As a process over stdio, with the official SDK client and the reference
// filesystem server from npm as the program's tool.

let folder: string;
let client: Client;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-threads-"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [binPath, "mcp", "--server", filesystemServer(folder)],
    env: process.env as Record<string, string>,
    cwd: repositoryRoot,
    stderr: "ignore",
  });
  client = new Client({ name: "codeaction-threads-test", version: "1.0.0" });
  await client.connect(transport);
});
afterAll(async () => {
  await client?.close();
  await rm(folder, { recursive: true, force: true });
});

const run = async (program: string, thread?: string) =>
  (await client.callTool(
    { name: "run_program", arguments: { program, ...(thread === undefined ? {} : { thread }) } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult & { structuredContent?: { thread?: { id: string; fresh: boolean } } };
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("codeaction mcp: run_program { thread }", () => {
  it("keeps a thread's variables between calls; another thread and a call without one do not see them", async () => {
    const first = await run("rows = list(range(10))\nprint('RESULT: loaded')", "analysis");
    expect(textOf(first)).toBe("loaded");
    expect(first.structuredContent?.thread).toEqual({ id: "analysis", fresh: true });
    const second = await run("print('RESULT:', sum(rows))", "analysis");
    expect(textOf(second)).toBe("45");
    expect(second.structuredContent?.thread).toEqual({ id: "analysis", fresh: false });
    expect(textOf(await run("print('RESULT:', 'rows' in globals())", "other"))).toBe("False");
    expect(textOf(await run("print('RESULT:', 'rows' in globals())"))).toBe("False");
  });

  it("refuses a thread name it cannot take, saying what a name is", async () => {
    const refused = await run("print('RESULT: x')", "../etc");
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("thread must be 1 to 64 letters");
  });

  it('over HTTP, "new" makes a thread only its maker can reach: another client holding the token gets its own', async () => {
    const server = await startMcpHttp(["--server", filesystemServer(folder), "--http", "0"], {
      HOME: folder,
    });
    const headers = { Authorization: `Bearer ${server.token}` };
    const alice = await connectClient(server.url, headers);
    const mallory = await connectClient(server.url, headers);
    const call = async (who: Client, program: string, thread: string) =>
      (await who.callTool({ name: "run_program", arguments: { program, thread } }, undefined, {
        timeout: 60_000,
      })) as CallToolResult & { structuredContent?: { thread?: { id: string; fresh: boolean } } };
    try {
      const made = await call(alice, "secret = 'alice'\nprint('RESULT: kept')", "new");
      const id = made.structuredContent?.thread?.id ?? "";
      expect(id).toMatch(/^t-[A-Za-z0-9_-]{22}$/);
      expect(made.structuredContent?.thread?.fresh).toBe(true);
      expect(textOf(await call(alice, "print('RESULT:', secret)", id))).toBe("alice");
      // Mallory asking for "new" too gets another thread, not Alice's.
      const other = await call(mallory, "print('RESULT:', 'secret' in globals())", "new");
      expect(textOf(other)).toBe("False");
      expect(other.structuredContent?.thread?.id).not.toBe(id);
    } finally {
      await Promise.allSettled([alice.close(), mallory.close()]);
      await server.stop();
    }
  });
});
