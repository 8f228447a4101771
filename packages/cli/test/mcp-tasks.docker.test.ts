import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/experimental/tasks/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, type McpHttpProcess, startMcpHttp } from "./mcp-http-process.ts";
import { repositoryRoot } from "./run-cli.ts";

// The specification's tasks ("call now, fetch later"), as the official SDK client uses them: a
// run_program called as a task returns at once; the client asks tasks/get until the task ends, then
// tasks/result, each request well within its own timeout, however long the program runs.

let folder: string;
let server: McpHttpProcess;
let client: Client;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-tasks-"));
  const orders = join(repositoryRoot, "examples/data/orders.csv");
  server = await startMcpHttp(["--csv", orders, "--http", "0", "--timeout", "60"], { HOME: folder });
  client = await connectClient(server.url, { Authorization: `Bearer ${server.token}` });
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

describe("run_program as a task (codeaction mcp --http)", () => {
  it("declares task support, and a program longer than every request's timeout returns through its task", async () => {
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === "run_program")?.execution).toEqual({ taskSupport: "optional" });
    const kinds: string[] = [];
    let result: unknown;
    const stream = client.experimental.tasks.callToolStream(
      { name: "run_program", arguments: { program: "import time\ntime.sleep(8)\nprint('RESULT: slept')" } },
      undefined,
      // Each request (the call, every tasks/get, the tasks/result) gets 5 s; the program takes 8.
      { task: { ttl: 60_000 }, timeout: 5000 },
    );
    for await (const message of stream) {
      kinds.push(message.type === "taskStatus" ? `status ${message.task.status}` : message.type);
      if (message.type === "result") result = message.result;
      if (message.type === "error") throw message.error;
    }
    expect(kinds[0]).toBe("taskCreated");
    expect(kinds).toContain("status working");
    expect(kinds.at(-1)).toBe("result");
    expect(result).toMatchObject({
      content: [{ type: "text", text: "slept" }],
      structuredContent: { status: "ok", result: "slept" },
    });
  });

  it("cancels a task's program, and knows no task it did not start", async () => {
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "run_program", arguments: { program: "import time\ntime.sleep(50)" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    expect(taskId).toMatch(/^job_[0-9a-f]{32}$/);
    await client.experimental.tasks.cancelTask(taskId);
    let status = "working";
    while (status === "working") {
      status = (await client.experimental.tasks.getTask(taskId)).status;
      if (status === "working") await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe("cancelled");
    await expect(client.experimental.tasks.getTask("job_00000000000000000000000000000000")).rejects.toThrow(
      /not found/i,
    );
  });
});
