import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpHttpProcess, startMcpHttp } from "../../packages/cli/test/mcp-http-process.ts";
import { createCliProject } from "./consumer-project.ts";
import { packPackages } from "./pack-packages.ts";
import { containersOf, deskProcessUnder, endsWithin } from "./processes.ts";
import { describeRun, runCommand } from "./run-command.ts";

// The command's long-running servers as users run them: the CLI's tarball installed alone with npm
// into an empty project under /tmp (outside the workspace), then
// - `codeaction mcp --http` driven by the MCP Inspector's CLI (@modelcontextprotocol/inspector,
//   installed from npm as a user runs it with npx). That CLI sends no progress token and waits 60 s
//   for any request: run_program cannot return a 70 s program to it; start_program and
//   program_result can, each call returning within its limit;
// - `npx codeaction desk` stopped through npx's pid.

/** The Inspector's release this test was written against (its CLI's options and output). */
const inspectorVersion = "2.12.0";
/** 70 s: longer than the Inspector's 60 s request timeout. */
const program = "import time\nprint('started', flush=True)\ntime.sleep(70)\nprint('RESULT: slept 70 s')";

let workArea: string;
let project: string;

beforeAll(async () => {
  workArea = await mkdtemp("/tmp/codeaction-packaging-servers-");
  const packed = await packPackages(join(workArea, "tarballs"));
  project = join(workArea, "consumer-cli");
  await createCliProject(project, packed);
}, 900_000);
afterAll(async () => {
  if (workArea) await rm(workArea, { recursive: true, force: true });
});

describe("a 70 s program through the MCP Inspector's CLI, served by the installed codeaction mcp", () => {
  let home: string;
  let inspector: string;
  let server: McpHttpProcess | undefined;

  beforeAll(async () => {
    // HOME is the test's own folder (the Inspector keeps a catalogue there, the server its token);
    // npm's cache stays where it was (a second run installs from it).
    home = join(workArea, "inspector");
    await mkdir(home);
    const env = { HOME: home, npm_config_cache: join(homedir(), ".npm") };
    const install = await runCommand(
      "npm",
      ["install", "--no-audit", "--no-fund", `@modelcontextprotocol/inspector@${inspectorVersion}`],
      { cwd: home, timeoutMs: 300_000, env },
    );
    expect(install.exitCode, describeRun(install)).toBe(0);
    inspector = join(home, "node_modules/.bin/mcp-inspector");
    const args = ["--csv", join(project, "orders.csv"), "--http", "0", "--timeout", "120"];
    const bin = join(project, "node_modules/.bin/codeaction");
    server = await startMcpHttp(args, { HOME: home }, { bin, cwd: project });
  }, 600_000);
  afterAll(async () => {
    await server?.stop();
  });

  /** One Inspector CLI call of `tool` with `args` (each a JSON value); resolves with the reply it printed. */
  async function inspectorCall(tool: string, args: Record<string, unknown>) {
    const command = [
      "--cli",
      server!.url,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer ${server!.token}`,
      "--method",
      "tools/call",
      "--tool-name",
      tool,
      "--tool-arg",
      ...Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`),
    ];
    const called = await runCommand(inspector, command, {
      cwd: home,
      timeoutMs: 120_000,
      env: { HOME: home },
    });
    // A reply with isError makes the CLI exit non-zero after printing it; anything else is a failure.
    const reply = /^\{\n[\s\S]*?^\}$/m.exec(called.stdout)?.[0];
    if (!reply) throw new Error(`the Inspector CLI printed no reply: ${describeRun(called)}`);
    return JSON.parse(reply) as Record<string, unknown>;
  }

  it("start_program returns at once; program_result says running with the output so far, then the result", async () => {
    const started = await inspectorCall("start_program", { program });
    expect(started.structuredContent, JSON.stringify(started)).toMatchObject({ state: "running" });
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
  });

  it("program_result of an id this server never gave is an error naming the fix", async () => {
    const reply = await inspectorCall("program_result", { run_id: "job_not-a-run", wait_seconds: 0 });
    expect(reply.isError).toBe(true);
    expect(JSON.stringify(reply.content)).toContain("Start it again with start_program");
  });
});

describe("npx codeaction desk, stopped through npx's pid", () => {
  /** `npx codeaction desk` in the project, with an empty replay (no question is asked). */
  function startNpxDesk(): { npx: ChildProcess; output: () => string } {
    const args = ["--no-install", "codeaction", "desk", "--port", "0", "--csv", "orders.csv"];
    const env: NodeJS.ProcessEnv = { ...process.env, npm_config_update_notifier: "false" };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const npx = spawn("npx", [...args, "--replay", "replay.json"], {
      cwd: project,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    npx.stdout!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    npx.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    return { npx, output: () => output };
  }

  it("the desk notices, stops, and leaves no container (npm's SIGTERM does not reach it)", async () => {
    await writeFile(join(project, "replay.json"), JSON.stringify({ replies: [] }));
    const { npx, output } = startNpxDesk();
    const npxEnded = new Promise((resolve) => npx.once("exit", resolve));
    const desk = await deskProcessUnder(npx.pid!, output);
    try {
      // The desk keeps a container ready for the first question: the one it must remove. Its warm
      // pool fills in the background, so the container may come a moment after the desk listens.
      await expect
        .poll(() => containersOf(desk), { timeout: 60_000, interval: 200, message: output() })
        .toHaveLength(1);
      // npm passes SIGTERM to its `sh -c codeaction ...`, which dies of it without passing it on:
      // the desk, reparented, is sent nothing.
      npx.kill("SIGTERM");
      await npxEnded;
      const ended = await endsWithin(desk, 30_000);
      expect(ended, output()).toBe(true);
      expect(output()).toContain("codeaction desk: the process that started it has ended; stopping");
      expect(await containersOf(desk)).toEqual([]);
    } finally {
      if (!(await endsWithin(desk, 0))) process.kill(desk.pid, "SIGTERM");
    }
  });
});
