import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpHttpProcess, startMcpHttp } from "../../packages/cli/test/mcp-http-process.ts";

// Issue 29, finding 3: the request body cap (8 MiB, 413) and the connection cap (64) of
// `codeaction mcp --http`, against the CLI as a process, spoken to over raw sockets (a hostile
// client does not use the SDK).

const mebibyte = 1024 * 1024;
let folder: string;
let server: McpHttpProcess;
let port: number;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-mcp-bounds-"));
  const csvPath = join(folder, "numbers.csv");
  await writeFile(csvPath, "value\n1\n");
  server = await startMcpHttp(["--csv", csvPath, "--http", "0"], { HOME: folder });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket));
    socket.once("error", reject);
  });
}

function requestHead(lines: string[]): string {
  return [
    "POST /mcp HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    `Authorization: Bearer ${server.token}`,
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    ...lines,
    "",
    "",
  ].join("\r\n");
}

/**
 * The status of the server's answer on `socket`, or "closed" when it closes the connection without
 * one, or "no answer" after `waitMs` (a server still waiting for the body the client never sends).
 */
function answer(socket: Socket, waitMs = 20_000): Promise<number | "closed" | "no answer"> {
  return new Promise((resolve) => {
    let received = "";
    const timer = setTimeout(() => resolve("no answer"), waitMs);
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      if (status) {
        clearTimeout(timer);
        resolve(Number(status[1]));
      }
    });
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve("closed");
    });
  });
}

/** A run_program call whose program is `characters` long: valid JSON the server would parse. */
function runCallBody(characters: number): string {
  const program = `# ${"x".repeat(characters)}\nprint("RESULT: 1")`;
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "run_program", arguments: { program } },
  });
}

describe("codeaction mcp --http: request bodies of at most 8 MiB (finding 3)", () => {
  it("answers 413 to a declared Content-Length over 8 MiB before any of the body arrives", async () => {
    const socket = await openSocket();
    const answered = answer(socket);
    socket.write(requestHead([`Content-Length: ${9 * mebibyte}`]));
    // Only a first kibibyte of the 9 MiB is ever sent: a server that read on would wait for the rest.
    socket.write("x".repeat(1024));
    expect(await answered).toBe(413);
    socket.destroy();
  });

  it("answers 413 to a chunked body once it passes 8 MiB, and runs nothing", async () => {
    const body = runCallBody(9 * mebibyte);
    const socket = await openSocket();
    const answered = answer(socket);
    socket.write(requestHead(["Transfer-Encoding: chunked"]));
    for (let start = 0; start < body.length; start += mebibyte) {
      const chunk = body.slice(start, start + mebibyte);
      socket.write(`${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`);
    }
    socket.write("0\r\n\r\n");
    expect(await answered).toBe(413);
    socket.destroy();
    expect(server.stderr()).not.toMatch(/run_program run_/);
  });

  it("reads a body under the cap (the same call, 7 MiB): the program is refused as a program, not as a body", async () => {
    const body = runCallBody(7 * mebibyte);
    const socket = await openSocket();
    const answered = answer(socket);
    socket.write(requestHead([`Content-Length: ${Buffer.byteLength(body)}`]));
    socket.write(body);
    expect(await answered).toBe(200);
    socket.destroy();
  });
});

describe("codeaction mcp --http: at most 64 connections (finding 3)", () => {
  it("closes a 65th connection at once, and serves again when one of the 64 has gone", async () => {
    const held: Socket[] = [];
    try {
      // 64 connections, each in the middle of a request's head (the server waits for the rest).
      for (let index = 0; index < 64; index += 1) {
        const socket = await openSocket();
        socket.on("error", () => undefined);
        socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
        held.push(socket);
      }
      const extra = await openSocket();
      const refused = answer(extra);
      extra.write(requestHead(["Content-Length: 2"]));
      extra.write("{}");
      expect(await refused).toBe("closed");

      held.pop()?.destroy();
      // The server notices the close on its own time: try until a new connection is served.
      await expect
        .poll(
          async () => {
            const socket = await openSocket();
            const answered = answer(socket);
            socket.write(requestHead(["Content-Length: 2"]));
            socket.write("{}");
            const status = await answered;
            socket.destroy();
            return status;
          },
          { timeout: 20_000, interval: 200 },
        )
        .toBeTypeOf("number");
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
