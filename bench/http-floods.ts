import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { startMcpHttp } from "../packages/cli/test/mcp-http-process.ts";
import { labelKeys } from "../packages/sandbox/src/container/labels.ts";

/** The three HTTP floods of issue 29, finding 3. */
export const httpFloods = {
  // (a) Clients that never read their replies to runs printing 1 MiB of control bytes (escaped
  // six-fold in JSON) on each stream: each connection sends a batch of 4.
  "non-reading clients, big-output runs": {
    connections: 12,
    batches: [4],
    program: "big-output",
    read: false,
  },
  // (b) Many connections, each queueing four programs of 1 MB.
  "64 connections queueing 1 MB programs": {
    connections: 64,
    batches: [4],
    program: "one-megabyte",
    read: true,
  },
  // (c) Batches: a 100-call batch of big-output runs (the original attack), then one of 4, unread.
  "100-call batches of big-output runs": {
    connections: 8,
    batches: [100, 4],
    program: "big-output",
    read: false,
  },
} as const;
export type HttpFlood = keyof typeof httpFloods;

const programs = {
  "big-output":
    'import sys\nsys.stderr.write("\\x01" * 1048576)\nsys.stdout.write("\\x01" * 1000000)\nprint("RESULT: " + "r" * 40000)',
  "one-megabyte": `# ${"x".repeat(999_950)}\nprint("RESULT: 1")`,
};

export type HttpFloodRun = {
  flood: HttpFlood;
  /** The server's resident memory once serving, before the flood (VmRSS). */
  baselineBytes: number;
  /** The server's peak resident memory over its life (VmHWM), read after the flood. */
  peakBytes: number;
  /** Runs the server finished (its stderr log lines). */
  runs: number;
  /** HTTP statuses of the requests whose answers were read. */
  statuses: Record<string, number>;
  /** Error results saying a cap refused a run, in the answers read. */
  refusedRuns: number;
  wallSeconds: number;
};

async function procStatus(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

function runCalls(count: number, program: string): unknown[] {
  return Array.from({ length: count }, (_value, index) => ({
    jsonrpc: "2.0",
    id: index + 1,
    method: "tools/call",
    params: { name: "run_program", arguments: { program } },
  }));
}

/**
 * One connection sending its batches one after the other. A reading client collects each answer
 * (to count statuses and refusals); a non-reading one pauses its socket and never reads a byte.
 */
async function flood(options: {
  port: number;
  token: string;
  batches: readonly number[];
  program: string;
  read: boolean;
  into: { statuses: Record<string, number>; refusedRuns: number };
}): Promise<Socket> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const opened = connect(options.port, "127.0.0.1", () => resolve(opened));
    opened.once("error", reject);
  });
  socket.on("error", () => undefined);
  if (!options.read) socket.pause();
  for (const size of options.batches) {
    const body = JSON.stringify(runCalls(size, options.program));
    const answered = options.read ? readAnswer(socket) : Promise.resolve("");
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${options.port}\r\nAuthorization: Bearer ${options.token}\r\n` +
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const text = await answered;
    if (!options.read) continue;
    const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? "none";
    options.into.statuses[status] = (options.into.statuses[status] ?? 0) + 1;
    options.into.refusedRuns += text.match(/(already has \d+ programs|The server is busy)/g)?.length ?? 0;
  }
  return socket;
}

/** One answer on `socket` (chunked SSE or JSON, or a refusal): read until it ends or the socket closes. */
function readAnswer(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      socket.off("data", onData);
      resolve(text);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const head = text.indexOf("\r\n\r\n");
      if (head < 0) return;
      const length = /content-length: (\d+)/i.exec(text.slice(0, head))?.[1];
      if (length !== undefined && text.length - head - 4 >= Number(length)) done();
      if (length === undefined && text.endsWith("0\r\n\r\n")) done();
    };
    socket.on("data", onData);
    socket.once("close", done);
  });
}

/** Resolves once no container of `pid` is alive and its stderr has gained no run line for `quietMs`. */
async function untilQuiet(docker: Dockerode, pid: number, runLines: () => number, quietMs = 10_000) {
  let last = -1;
  let quietSince = performance.now();
  for (;;) {
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${labelKeys.ownerPid}=${pid}`] },
    });
    const lines = runLines();
    if (lines !== last || containers.length > 0) {
      last = lines;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Each flood against a fresh `codeaction mcp --http` process (the CLI, one run of it per flood,
 * so its VmHWM is that flood's): the server's resident memory before, its peak, and what it answered.
 */
export async function measureHttpFloods(options: {
  docker: Dockerode;
  onProgress?: (message: string) => void;
}): Promise<HttpFloodRun[]> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-floods-"));
  const csvPath = join(folder, "numbers.csv");
  await writeFile(csvPath, "value\n1\n");
  const runs: HttpFloodRun[] = [];
  try {
    for (const [name, shape] of Object.entries(httpFloods) as Array<
      [HttpFlood, (typeof httpFloods)[HttpFlood]]
    >) {
      const server = await startMcpHttp(["--csv", csvPath, "--http", "0"], { HOME: folder });
      const pid = server.child.pid!;
      try {
        const baselineBytes = await procStatus(pid, "VmRSS");
        const started = performance.now();
        const into = { statuses: {} as Record<string, number>, refusedRuns: 0 };
        const port = Number(new URL(server.url).port);
        const sockets = await Promise.all(
          Array.from({ length: shape.connections }, () =>
            flood({ port, token: server.token!, ...shape, program: programs[shape.program], into }),
          ),
        );
        const runLines = () => server.stderr().match(/run_program run_\w+:/g)?.length ?? 0;
        await untilQuiet(options.docker, pid, runLines);
        const peakBytes = await procStatus(pid, "VmHWM");
        for (const socket of sockets) socket.destroy();
        const measured = {
          flood: name,
          baselineBytes,
          peakBytes,
          runs: runLines(),
          statuses: into.statuses,
          refusedRuns: into.refusedRuns,
          wallSeconds: (performance.now() - started) / 1000,
        };
        runs.push(measured);
        options.onProgress?.(
          `http flood ${name}: peak ${(peakBytes / 1024 ** 2).toFixed(0)} MiB (from ${(baselineBytes / 1024 ** 2).toFixed(0)} MiB), ${measured.runs} runs`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
  return runs;
}
