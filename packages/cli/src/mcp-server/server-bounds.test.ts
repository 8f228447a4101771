import { connect } from "node:net";
import type { ProgramRunner, ProgramRunResult } from "@codeaction/core";
import { createCodeModeServer, createRunAdmission, runProgramReply } from "@codeaction/core/mcp-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { type HttpListener, listenHttp } from "./http-listener.ts";

// Issue 29 finding 3: what one client can make the HTTP server hold is bounded. The real listener
// and the official SDK client; the runner is a fake behind its seam (runs wait until released), so
// queued runs can be counted without containers.

const token = "a-test-token-of-enough-characters";
const headers = { authorization: `Bearer ${token}` };
let listener: HttpListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

function finished(overrides: Partial<ProgramRunResult> = {}): ProgramRunResult {
  return {
    runId: "run_fake",
    containerStartMs: 0,
    exitCode: 0,
    stdout: "RESULT: done\n",
    stderr: "",
    truncated: false,
    status: "ok",
    result: "done",
    toolCalls: [],
    runMs: 1,
    ...overrides,
  };
}

/** A runner whose runs wait for `releaseAll()`; `started` counts the runs it was given. */
function waitingRunner() {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { started: 0 };
  const runner = {
    tools: [],
    stubSignatures: "",
    execTimeout: 50,
    maxToolCalls: 50,
    run: async () => {
      state.started += 1;
      await gate;
      return finished();
    },
    close: async () => undefined,
    [Symbol.asyncDispose]: async () => undefined,
  } as ProgramRunner;
  return { runner, state, releaseAll: () => release() };
}

async function serve(runner: ProgramRunner, limits: { maxRuns: number; perConnection: number }) {
  const admission = createRunAdmission(limits);
  listener = await listenHttp({
    host: "127.0.0.1",
    port: 0,
    token,
    createServer: (request) =>
      createCodeModeServer({
        runner,
        sandboxDescription: "fake",
        admit: admission.forConnection(request.socket),
      }),
  });
  return listener.url;
}

const runCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "run_program", arguments: { program: "print('RESULT: done')" } },
});

async function postJson(url: string, body: unknown): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      ...headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

describe("the HTTP server's bounds (issue 29 finding 3)", () => {
  it("answers runs past the server's cap with an error result at once, and runs the admitted ones", async () => {
    const { runner, state, releaseAll } = waitingRunner();
    const url = await serve(runner, { maxRuns: 3, perConnection: 4 });
    const client = new Client({ name: "flood", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
    try {
      const calls = Array.from({ length: 5 }, () =>
        client.callTool({ name: "run_program", arguments: { program: "print('RESULT: done')" } }),
      );
      const settled: CallToolResult[] = [];
      for (const call of calls) void call.then((result) => settled.push(result as CallToolResult));
      await expect.poll(() => settled.length, { timeout: 10_000 }).toBe(2);
      expect(state.started).toBe(3);
      for (const refused of settled) {
        expect(refused.isError).toBe(true);
        expect((refused.content[0] as { text: string }).text).toMatch(
          /^The server is busy: 3 programs are running or waiting, its limit \(3\)/,
        );
      }
      releaseAll();
      const all = (await Promise.all(calls)) as CallToolResult[];
      expect(all.filter((result) => !result.isError).map((result) => result.content)).toEqual([
        [{ type: "text", text: "done" }],
        [{ type: "text", text: "done" }],
        [{ type: "text", text: "done" }],
      ]);
    } finally {
      await client.close();
    }
  });

  it("caps one connection's runs (a batch on one socket), and refuses a batch over 4 messages", async () => {
    const { runner, state, releaseAll } = waitingRunner();
    const url = await serve(runner, { maxRuns: 20, perConnection: 2 });
    const refused = await postJson(url, [1, 2, 3, 4, 5].map(runCall));
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/a JSON-RPC batch of 5 messages: this server takes at most 4 per request/);
    expect(state.started).toBe(0);

    const batch = postJson(url, [1, 2, 3, 4].map(runCall));
    await expect.poll(() => state.started, { timeout: 10_000 }).toBe(2);
    releaseAll();
    const answered = await batch;
    expect(answered.status).toBe(200);
    expect(answered.text.match(/This connection already has 2 programs running or waiting/g)).toHaveLength(2);
    expect(answered.text.match(/"text":"done"/g)).toHaveLength(2);
    expect(state.started).toBe(2);
  });

  it("closes the connection of a client that stops reading its reply", async () => {
    const reply = "x".repeat(32 * 1024 * 1024);
    listener = await listenHttp({
      host: "127.0.0.1",
      port: 0,
      token,
      stallMs: 300,
      createServer: () => {
        const server = new Server({ name: "big", version: "1.0.0" }, { capabilities: { tools: {} } });
        server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: reply }] }));
        return server;
      },
    });
    const { port } = new URL(listener.url);
    const body = JSON.stringify(runCall(1));
    const socket = connect(Number(port), "127.0.0.1");
    socket.pause();
    socket.write(rawPost(port, body));
    // Not reading for a while (far longer than stallMs), then reading what is left.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    let received = 0;
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.resume();
    const closed = await Promise.race([
      new Promise<boolean>((resolve) => socket.once("close", () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000)),
    ]);
    socket.destroy();
    expect(closed).toBe(true);
    expect(received).toBeLessThan(reply.length);
  });

  it("reads one body at a time past the body budget: a second waits while the first is still arriving", async () => {
    listener = await listenHttp({
      host: "127.0.0.1",
      port: 0,
      token,
      bodyBudgetBytes: 1024,
      createServer: () => {
        const server = new Server({ name: "small", version: "1.0.0" }, { capabilities: { tools: {} } });
        server.setRequestHandler(CallToolRequestSchema, () => ({
          content: [{ type: "text", text: "done" }],
        }));
        return server;
      },
    });
    const { port } = new URL(listener.url);
    const padded = (id: number, padding: string) => ({
      ...runCall(id),
      params: { name: "run_program", arguments: { program: "print('RESULT: done')", padding } },
    });
    const body = JSON.stringify(padded(1, "p".repeat(600)));
    const socket = connect(Number(port), "127.0.0.1");
    let firstAnswer = "";
    socket.on("data", (chunk: Buffer) => {
      firstAnswer += chunk.toString();
    });
    socket.write(rawPost(port, body, body.slice(0, 100)));
    // 700 bytes held for the first body: the second's 700 do not fit in 1024 beside them.
    let secondAnswered = false;
    const second = postJson(listener.url, padded(2, "q".repeat(600))).then((answer) => {
      secondAnswered = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(secondAnswered).toBe(false);
    socket.write(body.slice(100));
    expect((await second).status).toBe(200);
    await expect.poll(() => firstAnswer).toMatch(/^HTTP\/1\.1 200 /);
    socket.destroy();
  });

  it("keeps bounded ends of stdout and stderr and the start of the RESULT in a reply", () => {
    const noise = "\u0001".repeat(1024 * 1024);
    const result = runProgramReply(
      finished({
        stdout: `${noise}RESULT: ${"r".repeat(300_000)}\n`,
        stderr: noise,
        result: "r".repeat(300_000),
      }),
    );
    const structured = result.structuredContent as {
      stdout: string;
      stderr: string;
      result: string;
      truncated: boolean;
    };
    expect(structured.stdout.length).toBeLessThan(66 * 1024);
    expect(structured.stdout).toMatch(/^\[\.\.\. \d+ characters before this were left out\]\n/);
    expect(structured.stderr.length).toBeLessThan(66 * 1024);
    expect(structured.result.length).toBeLessThan(130 * 1024);
    expect(structured.result).toMatch(/\[\.\.\. 168928 more characters were left out\]$/);
    expect(structured.truncated).toBe(true);
    expect(JSON.stringify(result).length).toBeLessThan(1.5 * 1024 * 1024);
  });
});

/** An authorized HTTP/1.1 POST to /mcp as raw text: the headers for all of `body`, then `sent` (all or a first part of it). */
function rawPost(port: string, body: string, sent = body): string {
  return [
    "POST /mcp HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    `Authorization: ${headers.authorization}`,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    sent,
  ].join("\r\n");
}
