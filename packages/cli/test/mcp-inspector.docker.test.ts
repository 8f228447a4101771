import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpHttpProcess, startMcpHttp } from "./mcp-http-process.ts";

// The MCP Inspector's CLI (@modelcontextprotocol/inspector, installed from npm as a user runs it
// with npx) sends no progress token and waits 60 s for any request: run_program cannot return a
// 70 s program to it. start_program and program_result can: each call returns within its limit.

/** The Inspector's release this test was written against (its CLI's options and output). */
const inspectorVersion = "2.12.0";
/** 70 s: longer than the Inspector's 60 s request timeout. */
const program = "import time\nprint('started', flush=True)\ntime.sleep(70)\nprint('RESULT: slept 70 s')";

let folder: string;
let server: McpHttpProcess;
let inspector: string;

/**
 * Runs `file args` in `cwd` with HOME set to the test's folder (the Inspector keeps a catalogue
 * there), npm's cache left where it was (a second run installs from it); resolves with the outcome.
 */
function run(file: string, args: string[], cwd: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const env = { ...process.env, HOME: folder, npm_config_cache: join(homedir(), ".npm") };
    execFile(
      file,
      args,
      { cwd, env, timeout: 120_000, maxBuffer: 8 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-inspector-"));
  const install = await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefix",
      folder,
      `@modelcontextprotocol/inspector@${inspectorVersion}`,
    ],
    folder,
  );
  expect(install.code, install.stderr).toBe(0);
  inspector = join(folder, "node_modules/.bin/mcp-inspector");
  const orders = fileURLToPath(new URL("../../../examples/data/orders.csv", import.meta.url));
  server = await startMcpHttp(["--csv", orders, "--http", "0", "--timeout", "120"], { HOME: folder });
});
afterAll(async () => {
  await server?.stop();
  await rm(folder, { recursive: true, force: true });
});

/** One Inspector CLI call of `tool` with `args` (each a JSON value); resolves with the reply it printed. */
async function inspectorCall(tool: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const command = [
    "--cli",
    server.url,
    "--transport",
    "http",
    "--header",
    `Authorization: Bearer ${server.token}`,
    "--method",
    "tools/call",
    "--tool-name",
    tool,
    "--tool-arg",
    ...Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`),
  ];
  const called = await run(inspector, command, folder);
  // A reply with isError makes the CLI exit non-zero after printing it; anything else is a failure.
  const reply = /^\{\n[\s\S]*?^\}$/m.exec(called.stdout)?.[0];
  if (!reply)
    throw new Error(
      `the Inspector CLI printed no reply (exit ${called.code}):\n${called.stdout}\n${called.stderr}`,
    );
  return JSON.parse(reply) as Record<string, unknown>;
}

describe("a 70 s program through the MCP Inspector's CLI", () => {
  it("start_program returns at once; program_result says running with the output so far, then the result", async () => {
    const started = await inspectorCall("start_program", { program });
    const runId = (started.structuredContent as { runId: string }).runId;
    expect(runId).toMatch(/^job_[0-9a-f]{32}$/);

    const replies: Record<string, unknown>[] = [];
    let state = "running";
    while (state === "running" && replies.length < 4) {
      const reply = await inspectorCall("program_result", { run_id: runId, wait_seconds: 50 });
      replies.push(reply);
      state = (reply.structuredContent as { state: string }).state;
    }
    // The first wait (50 s) ends before the program (70 s): running, with its first line.
    expect(replies[0]?.structuredContent).toMatchObject({ state: "running", output: "started\n" });
    expect(state).toBe("done");
    const last = replies.at(-1)!;
    expect(last.isError ?? false).toBe(false);
    expect(last.content).toEqual([{ type: "text", text: "slept 70 s" }]);
    expect(last.structuredContent).toMatchObject({ runId, state: "done", status: "ok", exitCode: 0 });
  }, 180_000);

  it("program_result of an id this server never gave is an error naming the fix", async () => {
    const reply = await inspectorCall("program_result", { run_id: "job_not-a-run", wait_seconds: 0 });
    expect(reply.isError).toBe(true);
    expect(JSON.stringify(reply.content)).toContain("Start it again with start_program");
  });
});
