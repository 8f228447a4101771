import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient, startMcpHttp } from "./mcp-http-process.ts";
import { binPath, repositoryRoot } from "./run-cli.ts";

// Issue 31, items 2 and 3: `codeaction mcp` as stock MCP clients meet it, as a process, with the
// official SDK client: denied tools are not offered, an engine failure names Docker and the fix,
// and progress notifications carry a client past its request timeout.

const run = promisify(execFile);
let folder: string;
let ordersCsv: string;
let secretsCsv: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-fit-"));
  ordersCsv = join(folder, "orders.csv");
  secretsCsv = join(folder, "secrets.csv");
  await writeFile(ordersCsv, "id,total\n1,10\n2,32\n");
  await writeFile(secretsCsv, "name,value\napi,hidden\n");
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function stdioClient(args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [binPath, "mcp", ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    cwd: repositoryRoot,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "codeaction-fit-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => stderr, pid: transport.pid };
}

const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

describe("codeaction mcp --deny: denied tools are not offered", () => {
  it("leaves them out of run_program's description and list_functions; a guessed call still gets ToolDenied", async () => {
    const { client, stderr } = await stdioClient([
      "--csv",
      ordersCsv,
      "--csv",
      secretsCsv,
      "--deny",
      "load_secrets",
    ]);
    try {
      const { tools } = await client.listTools();
      const runProgram = tools.find((tool) => tool.name === "run_program")!;
      expect(runProgram.description).toMatch(/: load_orders\./);
      expect(runProgram.description).not.toMatch(/load_secrets/);
      const listed = (await client.callTool({ name: "list_functions", arguments: {} })) as CallToolResult;
      expect(textOf(listed)).toMatch(/def load_orders\(/);
      expect(textOf(listed)).not.toMatch(/load_secrets/);
      expect(listed.structuredContent).toMatchObject({
        functions: [expect.objectContaining({ function: "load_orders" })],
        total: 1,
      });
      const searched = (await client.callTool({
        name: "list_functions",
        arguments: { query: "secrets" },
      })) as CallToolResult;
      expect(JSON.stringify(searched)).not.toMatch(/load_secrets/);
      const guessed = (await client.callTool({
        name: "run_program",
        arguments: {
          program: "try:\n    load_secrets()\nexcept ToolDenied as error:\n    print('RESULT:', error)",
        },
      })) as CallToolResult;
      expect(textOf(guessed)).toBe("load_secrets is denied by the server's --deny rule");
      expect(stderr()).toMatch(/serving 1 functions over stdio/);
    } finally {
      await client.close();
    }
  });
});

/** A unix socket at `path` forwarding to the real engine's, which can be taken away and brought back. */
async function engineProxy(path: string): Promise<{ open(): Promise<void>; shut(): Promise<void> }> {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((incoming) => {
        const outgoing = createConnection("/var/run/docker.sock");
        for (const socket of [incoming, outgoing]) {
          sockets.add(socket);
          socket.on("close", () => sockets.delete(socket));
          socket.on("error", () => undefined);
        }
        incoming.pipe(outgoing).pipe(incoming);
      });
      server.once("error", reject);
      server.listen(path, () => resolve());
    });
  const shut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      // Closing a unix-socket server removes its file: the path then holds no socket at all.
      server?.close(() => resolve());
    });
  await open();
  return { open, shut };
}

/** `codeaction mcp --csv orders.csv` over stdio whose engine is reached through a proxy the test can shut. */
async function serverBehindProxy(socketName: string) {
  const socketPath = join(folder, socketName);
  const proxy = await engineProxy(socketPath);
  const server = await stdioClient(["--csv", ordersCsv], { DOCKER_HOST: `unix://${socketPath}` });
  return {
    proxy,
    ...server,
    /** The engine back, so the server removes what it started when it stops; then all closed. */
    async close() {
      await proxy.open();
      await server.client.close();
      await proxy.shut();
    },
  };
}

/** What a client gets when the engine fails under run_program: an error result naming Docker and the fix. */
function expectEngineFailure(ran: CallToolResult): void {
  expect(ran.isError).toBe(true);
  expect(textOf(ran)).toMatch(/Docker/);
  expect(textOf(ran)).toMatch(/Check that Docker is running \(docker info\)/);
}

describe("codeaction mcp: an engine failure inside run_program", () => {
  it("names Docker and the fix when DOCKER_HOST stops answering (its socket is gone)", async () => {
    const { proxy, client, close } = await serverBehindProxy("engine.sock");
    try {
      await proxy.shut();
      const ran = (await client.callTool({
        name: "run_program",
        arguments: { program: "print('RESULT:', len(load_orders()))" },
      })) as CallToolResult;
      expectEngineFailure(ran);
    } finally {
      await close();
    }
  });
});

/** Resolves once a container started by process `pid` runs (read from the real engine's socket). */
async function containerRunning(pid: number | null): Promise<void> {
  for (;;) {
    const { stdout } = await run("docker", ["ps", "-q", "--filter", `label=codeaction.owner-pid=${pid}`]);
    if (stdout.trim() !== "") return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("codeaction mcp: the engine going away while a program runs", () => {
  it("ends the call with an error result naming Docker and the fix", async () => {
    const { proxy, client, pid, close } = await serverBehindProxy("engine-mid-run.sock");
    try {
      let progressed: () => void = () => undefined;
      const firstProgress = new Promise<void>((resolve) => {
        progressed = resolve;
      });
      const call = client.callTool(
        { name: "run_program", arguments: { program: "import time\ntime.sleep(30)\nprint('RESULT: done')" } },
        undefined,
        { onprogress: () => progressed(), timeout: 60_000 },
      );
      // The program's container runs and the run has begun: then the engine disappears.
      await Promise.all([containerRunning(pid ?? null), firstProgress]);
      await proxy.shut();
      expectEngineFailure((await call) as CallToolResult);
    } finally {
      await close();
    }
  });
});

describe("codeaction mcp: a program longer than the client's request timeout", () => {
  it("times out without progress, and succeeds when the client resets its timeout on progress", async () => {
    const server = await startMcpHttp(["--csv", ordersCsv, "--http", "0", "--timeout", "30"], {
      HOME: folder,
    });
    const client = await connectClient(server.url, { Authorization: `Bearer ${server.token}` });
    const call = {
      name: "run_program",
      arguments: { program: "import time\ntime.sleep(8)\nprint('RESULT: slept')" },
    };
    try {
      // The SDK client's own limit, set low to keep the test short (stock clients wait 60 s).
      await expect(client.callTool(call, undefined, { timeout: 5000 })).rejects.toMatchObject({
        code: -32001,
        message: expect.stringMatching(/Request timed out/),
      });
      const progress: { progress: number; total?: number; message?: string }[] = [];
      const ran = (await client.callTool(call, undefined, {
        timeout: 5000,
        resetTimeoutOnProgress: true,
        onprogress: (notification) => progress.push(notification),
      })) as CallToolResult;
      expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
      expect(textOf(ran)).toBe("slept");
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress[0]).toMatchObject({
        total: 30,
        message: expect.stringMatching(/the program is running/),
      });
      expect(progress.map((notification) => notification.progress)).toEqual(
        [...progress.map((notification) => notification.progress)].sort((left, right) => left - right),
      );
    } finally {
      await client.close();
      await server.stop();
    }
  });
});
