import { createProgramRunner, type ProgramRunner, type ToolSpec } from "@codeaction/core";
import { createCodeModeServer, ProgramJobs } from "@codeaction/core/mcp-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Code mode served from a library user's own MCP server: the public subpath's createCodeModeServer
// over a real runner (real containers), reached by the official SDK client over the SDK's linked
// in-memory transports, the way docs/mcp.md shows it. No CLI involved.

const calls: Record<string, unknown>[] = [];
const lookupOrder: ToolSpec = {
  name: "lookup_order",
  description: "Looks an order up by its id: its id and total.",
  inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
  origin: "test",
  invoke: async (args) => {
    calls.push(args);
    return { id: args.id, total: 41.5 };
  },
};

type Structured = {
  status: string;
  result: string | null;
  toolCalls: { tool: string; status: string; args?: unknown; result?: unknown }[];
  thread?: { id: string; fresh: boolean };
};

let runner: ProgramRunner;
const jobs = new ProgramJobs();
beforeAll(async () => {
  runner = await createProgramRunner({ tools: [lookupOrder], execTimeout: 30, threads: { maxThreads: 2 } });
});
afterAll(async () => {
  await jobs.close();
  await runner?.close();
});

/** A client connected to a fresh server over the runner, closed after `body`. */
async function withClient<T>(body: (client: Client) => Promise<T>): Promise<T> {
  const server = createCodeModeServer({ runner, jobs, confirmDelivery: true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "library-user", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  try {
    return await body(client);
  } finally {
    await client.close();
    await server.close();
  }
}

describe("createCodeModeServer from @codeaction/core/mcp-server, over in-memory transports", () => {
  it("lists the code-mode tools and the wrapped function's stub", async () => {
    await withClient(async (client) => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        "list_functions",
        "run_program",
        "start_program",
        "program_result",
      ]);
      const listed = (await client.callTool({ name: "list_functions", arguments: {} })) as CallToolResult;
      const text = listed.content.map((part) => (part.type === "text" ? part.text : "")).join("");
      expect(text).toContain("def lookup_order(");
      expect(text).toContain("Looks an order up by its id");
    });
  });

  it("runs a program in the sandbox that calls the host's tool, and keeps a thread's variables", async () => {
    await withClient(async (client) => {
      const first = (await client.callTool({
        name: "run_program",
        arguments: {
          program:
            "order = lookup_order(id='A-1')\nimport platform\nprint('RESULT:', order['total'] * 2, platform.system())",
          thread: "new",
        },
      })) as CallToolResult;
      const structured = first.structuredContent as Structured;
      expect(structured, JSON.stringify(first)).toMatchObject({ status: "ok", result: "83.0 Linux" });
      expect(first.content).toEqual([{ type: "text", text: "83.0 Linux" }]);
      expect(structured.toolCalls).toMatchObject([
        { tool: "lookup_order", status: "ok", args: { id: "A-1" }, result: { id: "A-1", total: 41.5 } },
      ]);
      expect(calls).toEqual([{ id: "A-1" }]);
      expect(structured.thread?.fresh).toBe(true);

      const second = (await client.callTool({
        name: "run_program",
        arguments: { program: "print('RESULT:', order['id'])", thread: structured.thread?.id },
      })) as CallToolResult;
      expect(second.structuredContent).toMatchObject({
        status: "ok",
        result: "A-1",
        thread: { fresh: false },
      });
      expect(calls).toHaveLength(1);
    });
  });
});
