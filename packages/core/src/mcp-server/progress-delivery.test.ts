import { PassThrough } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult, JSONRPCMessage, Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { ProgramRunner, ProgramRunResult } from "../program/program-runner.ts";
import type { AgentEvent } from "../types.ts";
import { createCodeModeServer } from "./code-mode-server.ts";

// The live-output race seen once in mcp-live-output.docker.test.ts: the official SDK client handles
// a progress notification a microtask late but a response at once, and drops its progress handler
// with the response; so notifications that reach it in the same read as the result are lost (and
// reported to onerror as an "unknown token"). A loaded client reads a pipe in large chunks. Here
// the server is the real one on the real stdio server transport; the client is the official SDK
// client on a transport that reads like a loaded client: everything that arrived during one turn
// of the event loop, in one batch. The runner is a fake behind its seam (no container).

type ProgramOutputEvent = Extract<AgentEvent, { type: "program-output" }>;

/** The client side of a pipe pair, delivering what arrived in one turn of the event loop together. */
class BatchReadingTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #toServer: PassThrough;
  readonly #buffer = new ReadBuffer();
  #scheduled = false;
  /** When false, the client sends no responses: it never answers the server's requests. */
  answering = true;

  constructor(toServer: PassThrough, fromServer: PassThrough) {
    this.#toServer = toServer;
    fromServer.on("data", (chunk: Buffer) => {
      this.#buffer.append(chunk);
      if (this.#scheduled) return;
      this.#scheduled = true;
      setImmediate(() => this.#deliver());
    });
  }

  #deliver(): void {
    this.#scheduled = false;
    for (let message = this.#buffer.readMessage(); message !== null; message = this.#buffer.readMessage()) {
      this.onmessage?.(message);
    }
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.answering && ("result" in message || "error" in message)) return;
    this.#toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

const finished: ProgramRunResult = {
  runId: "run_fake",
  containerStartMs: 0,
  exitCode: 0,
  stdout: "first line\nsecond line\nRESULT: opened\n",
  stderr: "",
  truncated: false,
  status: "ok",
  result: "opened",
  toolCalls: [],
  runMs: 1,
};

const line = (text: string): ProgramOutputEvent => ({
  type: "program-output",
  runId: "run_fake",
  attempt: 1,
  stream: "stdout",
  line: text,
});

/** A runner that prints a first line, then (a while later) two more and ends at once, as a program does. */
const printingRunner = {
  tools: [],
  stubSignatures: "",
  execTimeout: 50,
  maxToolCalls: 50,
  run: async (_program: string, options?: { onEvent?: (event: AgentEvent) => void }) => {
    options?.onEvent?.(line("first line"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    options?.onEvent?.(line("second line"));
    options?.onEvent?.(line("RESULT: opened"));
    return finished;
  },
  close: async () => undefined,
  [Symbol.asyncDispose]: async () => undefined,
} as ProgramRunner;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function connected(options: { deliveryTimeoutMs?: number } = {}) {
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const server = createCodeModeServer({
    runner: printingRunner,
    sandboxDescription: "fake",
    confirmDelivery: true,
    ...options,
  });
  await server.connect(new StdioServerTransport(toServer, fromServer));
  const transport = new BatchReadingTransport(toServer, fromServer);
  const client = new Client({ name: "progress-delivery-test", version: "1.0.0" });
  const errors: string[] = [];
  client.onerror = (error) => errors.push(error.message);
  await client.connect(transport);
  closers.push(async () => {
    await client.close();
    await server.close();
  });
  return { client, transport, errors };
}

const outputLine = (progress: Progress) =>
  (progress as { _meta?: Record<string, { line?: string }> })._meta?.["codeaction/output"]?.line;

describe("run_program over stdio: every output line reaches the client before the result", () => {
  it("a client that reads the last lines and the result together still sees the lines first", async () => {
    const { client, errors } = await connected();
    const lines: (string | undefined)[] = [];
    const ran = (await client.callTool(
      { name: "run_program", arguments: { program: "print(1)" } },
      undefined,
      {
        onprogress: (progress) => lines.push(outputLine(progress)),
      },
    )) as CallToolResult;
    expect(ran.isError ?? false).toBe(false);
    expect(lines).toEqual(["first line", "second line", "RESULT: opened"]);
    expect(errors).toEqual([]);
  });

  it("a client that never answers the server's requests still gets its result, after a bounded wait", async () => {
    const { client, transport } = await connected({ deliveryTimeoutMs: 50 });
    transport.answering = false;
    const ran = (await client.callTool(
      { name: "run_program", arguments: { program: "print(1)" } },
      undefined,
      {
        onprogress: () => undefined,
      },
    )) as CallToolResult;
    expect((ran.content[0] as { text: string }).text).toBe("opened");
  });
});
