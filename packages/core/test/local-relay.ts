import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RelayProcess } from "../src/bridge/host-bridge.ts";
import { relayCommand } from "../src/program/relay-process.ts";
import { type ProgramRun, type RunProgramOverOptions, runProgramOver } from "../src/program/run-program.ts";
import type { ToolSpec } from "../src/tools/tool-spec.ts";

/**
 * The relay run by this machine's python3 as a child process over pipes: the same stdin, stdout,
 * stderr and exit shape as a sandbox exec. For protocol tests only; programs run on the host here.
 */
export function startLocalRelay(): RelayProcess & { pid: number | undefined } {
  const [command, ...args] = relayCommand();
  const child = spawn(existsSync("/usr/bin/python3") ? "/usr/bin/python3" : command!, args, {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const exit = new Promise<{ exitCode: number | null }>((resolve) => {
    child.on("close", (exitCode) => resolve({ exitCode }));
    child.on("error", () => resolve({ exitCode: null }));
  });
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    exit,
    pid: child.pid,
    kill: async () => {
      child.kill("SIGKILL");
    },
  };
}

export type LocalRunOptions = Omit<
  RunProgramOverOptions,
  "process" | "runId" | "execTimeout" | "maxToolCalls"
> &
  Partial<Pick<RunProgramOverOptions, "runId" | "execTimeout" | "maxToolCalls">>;

/** Runs `program` through a local relay in a fresh temp folder (the bridge folder inside it). */
export async function runLocally(
  options: LocalRunOptions,
): Promise<ProgramRun & { relayExit: number | null }> {
  const directory = await mkdtemp(join(tmpdir(), "codeaction-bridge-"));
  const process = startLocalRelay();
  try {
    const run = await runProgramOver({
      runId: "run-test",
      execTimeout: 15,
      maxToolCalls: 50,
      ...options,
      process,
      bridgeDirectory: join(directory, ".codeaction"),
      workDirectory: directory,
      killStragglers: false,
    });
    const { exitCode } = await process.exit;
    return { ...run, relayExit: exitCode };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** Whether a process with this pid still runs (a zombie waiting to be reaped does not). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\S+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return false;
  }
}

/** A tool that echoes its `value` and records every call it gets: the bridge tests' workhorse. */
export function echoTool(name = "echo"): { tool: ToolSpec; calls: Array<Record<string, unknown>> } {
  const calls: Array<Record<string, unknown>> = [];
  const tool: ToolSpec = {
    name,
    description: "Echoes its value.",
    origin: "tool",
    inputSchema: { type: "object", properties: { value: {} } },
    invoke: async (args) => {
      calls.push(args);
      return { echoed: args.value ?? null };
    },
  };
  return { tool, calls };
}

/** `count` plain objects whose every read of their one field is counted: what walked a value. */
export function countedItems(count: number): { items: object[]; counter: { reads: number } } {
  const counter = { reads: 0 };
  const items = Array.from({ length: count }, (_, index) => {
    const item = {};
    Object.defineProperty(item, "name", {
      enumerable: true,
      get: () => {
        counter.reads += 1;
        return `item ${index}`;
      },
    });
    return item;
  });
  return { items, counter };
}
