import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everythingServer, memoryServer } from "./reference-servers.ts";
import { binPath, repositoryRoot, runCli } from "./run-cli.ts";

// What an MCP tool author runs, as processes against real containers and the reference servers
// from npm: `codeaction run` (a hand-written program, no model) and `codeaction mcp` (code mode
// served to the official SDK client over stdio and Streamable HTTP).

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-tool-author-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

async function programFile(name: string, lines: string[]): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

describe("codeaction run FILE.py --server CMD", () => {
  it("runs the program with the server's stubs bridged and prints its output, each tool call and the RESULT", async () => {
    // The program docs/mcp.md shows.
    const program = join(repositoryRoot, "examples/tool-author/weather.py");
    const run = await runCli(["run", program, "--server", everythingServer]);
    expect(run.exitCode, run.stderr).toBe(0);
    // stdout is the program's own output.
    expect(run.stdout).toMatch(
      /^humidity \d+\nrefused: MCP error -32602: Input validation error\nRESULT: \{"temperature": \d+, "sum": "The sum of 2 and 3 is 5."\}\n$/,
    );
    // stderr: each call with its arguments, status, duration and the start of its result.
    expect(run.stderr).toMatch(
      /\[tool\] get-structured-content \{"location":"Chicago"\} -> ok in \d+ ms: \{"temperature":\d+,"conditions":"[^"]+","humidity":\d+\}/,
    );
    expect(run.stderr).toMatch(/\[tool\] get-sum \{"a":"one","b":2\} -> error in \d+ ms: MCP error -32602/);
    expect(run.stderr).toMatch(
      /\[tool\] get-sum \{"a":2,"b":3\} -> ok in \d+ ms: "The sum of 2 and 3 is 5."/,
    );
    expect(run.stderr).toMatch(
      /\[run\] ok, exit 0, 3 tool calls, [\d.]+ s\. RESULT: \{"temperature": \d+, "sum": "The sum of 2 and 3 is 5."\}\n$/,
    );
  });

  it("exits 1 and says how the program ended when it fails, and when it prints no RESULT", async () => {
    const failing = await programFile("failing.py", [
      "echo(message='hi')",
      "raise ValueError('no such city')",
    ]);
    const failed = await runCli(["run", failing, "--server", everythingServer]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toMatch(/ValueError: no such city/);
    expect(failed.stderr).toMatch(/\[tool\] echo \{"message":"hi"\} -> ok in \d+ ms: "Echo: hi"/);
    expect(failed.stderr).toMatch(/\[run\] failed, exit 1, 1 tool call, [\d.]+ s\n$/);

    const silent = await programFile("silent.py", ["print('no answer here')"]);
    const noResult = await runCli(["run", silent, "--max-tool-calls", "0"]);
    expect(noResult.exitCode).toBe(1);
    expect(noResult.stdout).toBe("no answer here\n");
    expect(noResult.stderr).toMatch(
      /\[run\] no RESULT line: a code-action turn would count this as a failed attempt, exit 0/,
    );
  });

  it("--csv gives the program load_<name>() with typed rows, as ask does", async () => {
    const program = await programFile("orders.py", [
      "rows = load_orders()",
      'print("RESULT:", len(rows), type(rows[0]["quantity"]).__name__)',
    ]);
    const run = await runCli(["run", program, "--csv", join(repositoryRoot, "examples/data/orders.csv")]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^RESULT: \d+ int\n$/);
    expect(run.stderr).toMatch(
      /\[tool\] load_orders \{"offset":0\} -> ok in \d+ ms: [[{].*\.\.\. \(\d+ bytes\)\n/,
    );
  });

  it("--approve asks on the terminal before each call; a refused call raises ToolDenied", async () => {
    const program = await programFile("approve.py", [
      "first = get_sum(a=1, b=1)",
      "try:",
      "    get_sum(a=2, b=2)",
      "except ToolDenied as error:",
      '    print("denied:", error)',
      'print("RESULT:", first)',
    ]);
    const command = [process.execPath, binPath, "run", "--approve", program, "--server", everythingServer]
      .map((word) => `'${word.replaceAll("'", "'\\''")}'`)
      .join(" ");
    // `script` gives the command a real terminal; the answers are typed into it one line each.
    const child = spawn("script", ["-qec", command, "/dev/null"], { cwd: repositoryRoot });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      const asked = output.match(/\[y\/N\]/g)?.length ?? 0;
      if (asked > answered) child.stdin.write(answered++ === 0 ? "y\n" : "n\n");
    });
    let answered = 0;
    const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(exitCode, output).toBe(0);
    expect(output).toMatch(/allow get-sum \{"a":1,"b":1\}\? \[y\/N\]/);
    expect(output).toMatch(/allow get-sum \{"a":2,"b":2\}\? \[y\/N\]/);
    expect(output).toMatch(/denied: refused at the terminal/);
    expect(output).toMatch(/\[tool\] get-sum \{"a":2,"b":2\} -> denied/);
    expect(output).toMatch(/RESULT: The sum of 1 and 1 is 2\./);
  });
});

const memoryProgram = [
  "import json",
  'create_entities(entities=[{"name": "Ada", "entityType": "person", "observations": ["wrote the first program"]}])',
  'graph = search_nodes(query="Ada")',
  'print("RESULT:", json.dumps([entity["observations"] for entity in graph["entities"]]))',
].join("\n");

/** The checks a client makes: the two tools, the stubs, a program using the wrapped server's structured results, a failure. */
async function exerciseCodeMode(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual([
    "list_functions",
    "run_program",
    "start_program",
    "program_result",
  ]);
  expect(tools[1]!.description).toMatch(/create_entities, .*search_nodes/);

  const listed = (await client.callTool({ name: "list_functions", arguments: {} })) as CallToolResult;
  const text = (listed.content[0] as { text: string }).text;
  expect(text).toMatch(/def search_nodes\(\*, query: str\) -> dict\[str, Any\]:/);
  expect(listed.structuredContent).toMatchObject({
    functions: expect.arrayContaining([
      expect.objectContaining({ function: "read_graph", tool: "read_graph", origin: "mcp:index" }),
    ]),
  });

  const ran = (await client.callTool({
    name: "run_program",
    arguments: { program: memoryProgram },
  })) as CallToolResult;
  expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
  expect(ran.content).toEqual([{ type: "text", text: '[["wrote the first program"]]' }]);
  expect(ran.structuredContent).toMatchObject({
    status: "ok",
    result: '[["wrote the first program"]]',
    exitCode: 0,
    stderr: "",
    toolCalls: [
      { tool: "create_entities", status: "ok" },
      {
        tool: "search_nodes",
        args: { query: "Ada" },
        status: "ok",
        result: {
          entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }],
        },
      },
    ],
  });

  const failed = (await client.callTool({
    name: "run_program",
    arguments: {
      program:
        "try:\n    delete_entities(entityNames=['Ada'])\nexcept ToolDenied as error:\n    raise SystemExit(f'stopped: {error}')",
    },
  })) as CallToolResult;
  expect(failed.isError).toBe(true);
  expect((failed.content[0] as { text: string }).text).toMatch(
    /^The program failed \(exit 1\)\.\nstderr \(the end\):\nstopped: delete_entities is denied by the server's --deny rule$/,
  );
  expect(failed.structuredContent).toMatchObject({
    status: "error",
    result: null,
    toolCalls: [{ tool: "delete_entities", status: "denied" }],
  });
}

describe("codeaction mcp: code mode for any MCP client", () => {
  it("over stdio, to the official SDK client", async () => {
    const memoryFile = join(folder, "memory-stdio.jsonl");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [binPath, "mcp", "--server", memoryServer(memoryFile), "--deny", "delete_entities"],
      env: process.env as Record<string, string>,
      cwd: repositoryRoot,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "codeaction-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      await exerciseCodeMode(client);
    } finally {
      await client.close();
    }
    expect(stderr).toMatch(/serving 8 functions over stdio/);
    expect(stderr).toMatch(/run_program run_\w+: ok, exit 0, 2 tool calls/);
    // The wrapped server really kept what the program created.
    expect(await readFile(memoryFile, "utf8")).toMatch(/"name":"Ada"/);
  });

  it("over Streamable HTTP on loopback, to the official SDK client; other Hosts are refused", async () => {
    const memoryFile = join(folder, "memory-http.jsonl");
    const child = spawn(
      process.execPath,
      [binPath, "mcp", "--server", memoryServer(memoryFile), "--deny", "delete_entities", "--http", "0"],
      { cwd: repositoryRoot, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    const [url, token] = await new Promise<[string, string]>((resolve, reject) => {
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        const match = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
        const printed = /"Authorization: Bearer (\S+)"/.exec(stderr);
        if (match && printed) resolve([match[1]!, printed[1]!]);
      });
      child.on("exit", () => reject(new Error(`codeaction mcp exited: ${stderr}`)));
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      const client = new Client({ name: "codeaction-test", version: "1.0.0" });
      // The token it printed, as docs/mcp.md shows.
      const requestInit = { headers: { Authorization: `Bearer ${token}` } };
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
      try {
        await exerciseCodeMode(client);
      } finally {
        await client.close();
      }
      // A page on another name resolving to 127.0.0.1 (DNS rebinding) is refused.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const request = httpRequest(
          url,
          { method: "POST", headers: { host: "attacker.example" } },
          (response) => {
            response.resume();
            resolve(response.statusCode);
          },
        );
        request.on("error", reject);
        request.end("{}");
      });
      expect(status).toBe(403);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
