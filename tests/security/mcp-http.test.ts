import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectClient,
  type McpHttpProcess,
  startMcpHttp,
} from "../../packages/cli/test/mcp-http-process.ts";

// Issue 29, findings 1 and 2: `codeaction mcp --http` as a real process, the official SDK client,
// and another local user (uid 65534, a real second uid through setpriv) as the attacker.

const run = promisify(execFile);
const otherUser = ["--reuid=65534", "--regid=65534", "--clear-groups"];
const secret = `owner-only-${Date.now().toString(36)}`;
const readSecret = 'print("RESULT:", load_secret()[0]["value"])';

let folder: string;
let home: string;
let csvPath: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-http-"));
  // A home other users may enter: only the token file's own modes protect it.
  home = join(folder, "home");
  await mkdir(home);
  await chmod(folder, 0o755);
  await chmod(home, 0o755);
  // The owner's data, in a 0700 folder: what the attacker wants.
  const privateFolder = join(folder, "private");
  await mkdir(privateFolder, { mode: 0o700 });
  csvPath = join(privateFolder, "secret.csv");
  await writeFile(csvPath, `value\n${secret}\n`, { mode: 0o600 });
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** A tools/call run_program as one raw JSON-RPC POST, with curl run as `asUser` (setpriv arguments) or as us. */
async function curlRunProgram(options: {
  url: string;
  headers?: Record<string, string>;
  asUser?: string[];
}): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "run_program", arguments: { program: readSecret } },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    ...options.headers,
  };
  const curl = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-X", "POST", "--data-binary", body];
  for (const [name, value] of Object.entries(headers)) curl.push("-H", `${name}: ${value}`);
  curl.push(options.url);
  const [file, ...args] = options.asUser ? ["setpriv", ...options.asUser, ...curl] : curl;
  const { stdout } = await run(file!, args, { timeout: 120_000 });
  const cut = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

describe("codeaction mcp --http: a bearer token on every request (finding 1)", () => {
  let server: McpHttpProcess;
  beforeAll(async () => {
    server = await startMcpHttp(["--csv", csvPath, "--http", "0"], { HOME: home });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("prints a random token once and writes it to a 0600 file in a 0700 folder", async () => {
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(server.tokenPath).toBe(join(home, ".codeaction", "mcp", `http-${new URL(server.url).port}.token`));
    expect((await readFile(server.tokenPath!, "utf8")).trim()).toBe(server.token);
    expect((await stat(server.tokenPath!)).mode & 0o777).toBe(0o600);
    expect((await stat(dirname(server.tokenPath!))).mode & 0o777).toBe(0o700);
    expect(server.stderr().split(server.token!).length - 1).toBe(1);
  });

  it("serves the official SDK client that sends the token, and refuses it without (401)", async () => {
    const client = await connectClient(server.url, { Authorization: `Bearer ${server.token}` });
    try {
      const ran = (await client.callTool({
        name: "run_program",
        arguments: { program: readSecret },
      })) as CallToolResult;
      expect(ran.content).toEqual([{ type: "text", text: secret }]);
    } finally {
      await client.close();
    }
    await expect(connectClient(server.url)).rejects.toMatchObject({ code: 401 });
    await expect(connectClient(server.url, { Authorization: "Bearer not-the-token" })).rejects.toMatchObject({
      code: 401,
    });
  });

  it("another local user (uid 65534) gets 401 for run_program and cannot read the token file", async () => {
    const attempt = await curlRunProgram({ url: server.url, asUser: otherUser });
    expect(attempt.status).toBe(401);
    expect(attempt.body).not.toContain(secret);
    const reading = await run("setpriv", [...otherUser, "cat", server.tokenPath!]).then(
      () => "read",
      (error: { stderr: string }) => error.stderr,
    );
    expect(reading).toMatch(/Permission denied/);
    // The same request with the token runs: the 401 was the token's doing, not the request's shape.
    const owner = await curlRunProgram({
      url: server.url,
      headers: { authorization: `Bearer ${server.token}` },
    });
    expect(owner.status).toBe(200);
    expect(owner.body).toContain(secret);
    expect(server.stderr()).toMatch(/run_program run_\w+: ok/);
  });

  it("removes the token file when it stops", async () => {
    const path = server.tokenPath!;
    expect(await server.stop()).toBe(0);
    await expect(stat(path)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("codeaction mcp --http: Host and Origin for any bind (finding 2)", () => {
  it("on --host 127.0.0.2 refuses Host and Origin rebind.example.invalid (403), even with the token", async () => {
    const server = await startMcpHttp(["--csv", csvPath, "--http", "0", "--host", "127.0.0.2"], {
      HOME: home,
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/mcp$/);
      const authorization = `Bearer ${server.token}`;
      const rebound = await curlRunProgram({
        url: server.url,
        headers: { host: "rebind.example.invalid", origin: "http://rebind.example.invalid", authorization },
      });
      expect(rebound.status).toBe(403);
      expect(rebound.body).not.toContain(secret);
      const foreignOrigin = await curlRunProgram({
        url: server.url,
        headers: { origin: "http://rebind.example.invalid", authorization },
      });
      expect(foreignOrigin.status).toBe(403);
      expect(server.stderr()).not.toMatch(/run_program run_/);
      // 127.0.0.2 is loopback: no warning.
      expect(server.stderr()).not.toMatch(/warning/);
      const client = await connectClient(server.url, { Authorization: authorization });
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        "list_functions",
        "run_program",
        "start_program",
        "program_result",
      ]);
      await client.close();
    } finally {
      await server.stop();
    }
  });

  it("warns on stderr for a bind beyond loopback, and still requires the token and a known Host", async () => {
    const server = await startMcpHttp(["--csv", csvPath, "--http", "0", "--host", "0.0.0.0"], { HOME: home });
    try {
      expect(server.stderr()).toMatch(/warning: listening on 0\.0\.0\.0, beyond this machine's loopback/);
      const url = server.url.replace("0.0.0.0", "127.0.0.1");
      expect((await curlRunProgram({ url })).status).toBe(401);
      const rebound = await curlRunProgram({
        url,
        headers: { host: "rebind.example.invalid", authorization: `Bearer ${server.token}` },
      });
      expect(rebound.status).toBe(403);
    } finally {
      await server.stop();
    }
  });
});
