import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { buildAgent, type ToolSpec } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import {
  connectDocker,
  type SandboxConfigInput,
  SandboxManager,
  type SandboxSession,
} from "@codeaction/sandbox";
import { afterAll, beforeAll, expect } from "vitest";
import { type ProgramRun, runProgram } from "../../packages/core/src/program/run-program.ts";
import { renderStubsModule } from "../../packages/core/src/prompt/python-stubs.ts";
import type { AgentEvent, AgentResult, Attempt } from "../../packages/core/src/types.ts";
import { defaultUserRange as userRange } from "../../packages/sandbox/src/config.ts";
import { labelKeys } from "../../packages/sandbox/src/container/labels.ts";
import { pythonPrelude } from "./python.ts";

/** Both runtimes every case runs under: runc ("docker") and runsc ("gvisor"). */
export const backends = ["docker", "gvisor"] as const;
export type Backend = (typeof backends)[number];

/** Every name a hostile program creates contains this, so an escaped write is easy to find on the host. */
export const hostileMarker = "codeaction-hostile";

/** A fake secret put into this process's environment: no container may ever see it. */
export const fakeSecret = `sk-codeaction-fake-secret-${randomBytes(6).toString("hex")}`;
process.env.CODEACTION_SECURITY_FAKE_API_KEY = fakeSecret;

type DockerClient = Awaited<ReturnType<typeof connectDocker>>["docker"];
let dockerClient: Promise<DockerClient> | undefined;

/** The engine the tests inspect (the same one the sandbox uses). */
export function docker(): Promise<DockerClient> {
  dockerClient ??= connectDocker().then(
    (connected) => connected.docker,
    (error: unknown) => {
      dockerClient = undefined;
      throw error;
    },
  );
  return dockerClient;
}

/** Managed containers that carry `label=value` (any state). */
export async function containersWithLabel(label: string, value: string): Promise<string[]> {
  const client = await docker();
  const list = await client.listContainers({ all: true, filters: { label: [`${label}=${value}`] } });
  return list.map((container) => container.Id);
}

/** Managed containers owned by this process (a vitest file runs alone in its worker). */
export function containersOfThisProcess(): Promise<string[]> {
  return containersWithLabel(labelKeys.ownerPid, String(process.pid));
}

const sentinelPath = join("/tmp", `codeaction-security-sentinel-${process.pid}`);
process.once("exit", () => rmSync(sentinelPath, { force: true }));
const watchedFolders = ["/", "/tmp", "/var/tmp", "/root", "/etc", "/dev/shm", "/workspace", "/home"];
const watchedFiles = ["/etc/passwd", "/etc/hosts", "/etc/hostname", "/proc/sys/kernel/core_pattern"];

/** What the host looks like: a sentinel file, files hostile programs aim at, and new names in common folders. */
export type HostState = {
  sentinel: { hash: string; mtimeMs: number; inode: number };
  files: Record<string, string>;
  entries: Record<string, string[]>;
  hostname: string;
};

function hashOf(path: string): string {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch (error) {
    return `unreadable: ${(error as NodeJS.ErrnoException).code}`;
  }
}

function entriesOf(folder: string): string[] {
  try {
    return readdirSync(folder).sort();
  } catch {
    return [];
  }
}

/** Takes a picture of the host (creating this process's sentinel file the first time). */
export function captureHost(): HostState {
  if (!existsSync(sentinelPath)) writeFileSync(sentinelPath, randomBytes(64).toString("hex"));
  const stat = statSync(sentinelPath);
  return {
    sentinel: { hash: hashOf(sentinelPath), mtimeMs: stat.mtimeMs, inode: stat.ino },
    files: Object.fromEntries(watchedFiles.map((path) => [path, hashOf(path)])),
    entries: Object.fromEntries(watchedFolders.map((folder) => [folder, entriesOf(folder)])),
    hostname: hostname(),
  };
}

/**
 * Asserts the host is as it was: the sentinel and the watched files unchanged, and no new entry in
 * the watched folders that a hostile program could have made (its marker name, or owned by uid 65534
 * or a uid of the default userRange, where sandboxes run).
 */
export function expectHostUnaffected(before: HostState): void {
  const after = captureHost();
  expect(after.sentinel).toEqual(before.sentinel);
  expect(after.files).toEqual(before.files);
  expect(after.hostname).toBe(before.hostname);
  for (const folder of watchedFolders) {
    const earlier = new Set(before.entries[folder]);
    const suspicious = (after.entries[folder] ?? []).filter((name) => {
      if (earlier.has(name)) return false;
      if (name.includes(hostileMarker)) return true;
      try {
        const owner = statSync(join(folder, name)).uid;
        return owner === 65534 || (owner >= userRange.first && owner < userRange.first + userRange.count);
      } catch {
        return false;
      }
    });
    expect(suspicious, `new entries in the host's ${folder}`).toEqual([]);
  }
}

/** A host path no container may see: the sentinel's name, for programs that look for it. */
export const sentinelName = sentinelPath.slice("/tmp/".length);

/** Quotes one argument for /bin/sh. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

/** Runs a Python program with `session.execute` (for probes of the sandbox itself). */
export function executePython(session: SandboxSession, program: string, options: { timeout?: number } = {}) {
  return session.execute(`python3 -I -c ${shellQuote(program)}`, options);
}

/** The JSON after the last RESULT line of a run (fails the test when there is none). */
export function resultJson<T = Record<string, unknown>>(run: {
  status: string;
  result?: string;
  stderr: string;
}): T {
  expect(run.status, run.stderr).toBe("ok");
  expect(run.result, run.stderr).toBeDefined();
  return JSON.parse(run.result!) as T;
}

/** A tool that records its calls and returns `{ echoed: value }`, after `delayMs`. */
export function echoTool(options: { name?: string; delayMs?: number } = {}) {
  const calls: Array<Record<string, unknown>> = [];
  const tool: ToolSpec = {
    name: options.name ?? "echo",
    description: "Returns the value it was given.",
    origin: "tool",
    inputSchema: { type: "object", properties: { value: {} } },
    invoke: async (args) => {
      calls.push(args);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      return { echoed: args.value ?? null };
    },
  };
  return { tool, calls };
}

export type CaseOptions = {
  program: string;
  tools?: ToolSpec[];
  execTimeout?: number;
  maxToolCalls?: number;
  /** Runs against the run's container after the program ended and before it is removed. */
  after?: (session: SandboxSession, run: ProgramRun) => Promise<void>;
  /** Runs while the program runs (started right after the container). */
  during?: (session: SandboxSession) => Promise<void>;
};

/**
 * Runs one hostile program the way code-action does (a fresh container, the relay, runProgram),
 * then removes the container and checks: exactly one terminal status, the container gone, nothing
 * left with the manager's label, and the host unaffected.
 */
export async function runCase(manager: SandboxManager, options: CaseOptions): Promise<ProgramRun> {
  const before = captureHost();
  const tools = options.tools ?? [];
  const session = await manager.createSession({ deadlineSeconds: 600 });
  const containerId = session.containerId;
  let run: ProgramRun;
  try {
    const during = options.during?.(session);
    run = await runProgram({
      session,
      program: options.program,
      stubsSource: renderStubsModule(tools),
      tools,
      runId: `security-${Date.now()}`,
      execTimeout: options.execTimeout ?? 60,
      maxToolCalls: options.maxToolCalls ?? 50,
    });
    await during;
    await options.after?.(session, run);
  } finally {
    await session.close();
  }
  expect(["ok", "error", "timeout", "oom", "no-result", "tool-limit", "infrastructure"]).toContain(
    run.status,
  );
  for (const id of new Set([containerId, session.containerId])) expect(await removedSoon(id), id).toBe(true);
  expect(await containersWithLabel(labelKeys.managerId, manager.managerId)).toEqual([]);
  expectHostUnaffected(before);
  return run;
}

/** Whether a container is gone (404) within `waitMs` (a removal may still be in progress: 409). */
export async function removedSoon(containerId: string, waitMs = 10_000): Promise<boolean> {
  const client = await docker();
  const deadline = Date.now() + waitMs;
  for (;;) {
    const gone = await client
      .getContainer(containerId)
      .inspect()
      .then(
        () => false,
        (error: { statusCode?: number }) => error.statusCode === 404,
      );
    if (gone || Date.now() > deadline) return gone;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A manager for one backend, ready. */
export async function readyManager(
  backend: Backend,
  config: SandboxConfigInput = {},
): Promise<SandboxManager> {
  const manager = new SandboxManager({ backend, network: "none", ...config });
  await manager.ready();
  return manager;
}

/** A ready manager for the suite it is called in (made in beforeAll, cleaned up in afterAll). */
export function suiteManager(backend: Backend, config: SandboxConfigInput = {}): () => SandboxManager {
  let manager: SandboxManager | undefined;
  beforeAll(async () => {
    manager = await readyManager(backend, config);
  });
  afterAll(async () => {
    await manager?.close();
  });
  return () => {
    if (!manager) throw new Error("the suite's sandbox manager is not ready (beforeAll failed)");
    return manager;
  };
}

/** Runs `body` after the probe prelude (tests/support/python.ts) and returns its RESULT as JSON. */
export async function probeOutcomes<T = Record<string, string>>(
  manager: SandboxManager,
  body: string,
): Promise<T> {
  return resultJson<T>(await runCase(manager, { program: `${pythonPrelude}\n${body}` }));
}

/** The fenced reply a model would write. */
export function fenced(program: string): string {
  return `Here is the program.\n\n\`\`\`python\n${program}\n\`\`\`\n`;
}

export type AgentCase = {
  events: AgentEvent[];
  result?: AgentResult;
  error?: Error & { attempts?: Attempt[]; code?: string };
  /** Every attempt, from the result or from the error. */
  attempts: Attempt[];
};

/**
 * Runs programs through buildAgent with a scripted model (one reply per attempt), then shuts the
 * agent down and checks: each program-start has exactly one program-end, the turn ends exactly once
 * (an answer or an error), every attempt has its record, no container of this process remains, and
 * the host is unaffected.
 */
export async function runAgentCase(options: {
  backend: Backend;
  programs: string[];
  extraTools?: import("@langchain/core/tools").StructuredToolInterface[];
  codeAction?: { execTimeout?: number; maxRepairs?: number; maxToolCalls?: number; dataFiles?: string[] };
  sandbox?: SandboxConfigInput;
  logger?: import("pino").Logger;
  question?: string;
}): Promise<AgentCase> {
  const before = captureHost();
  const model = new ScriptedChatModel(options.programs.map(fenced));
  const agent = await buildAgent({
    model,
    pattern: "code-action",
    sandbox: { backend: options.backend, network: "none", ...options.sandbox },
    codeAction: { maxRepairs: options.programs.length - 1, execTimeout: 60, ...options.codeAction },
    ...(options.extraTools ? { extraTools: options.extraTools } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const outcome: AgentCase = { events: [], attempts: [] };
  try {
    try {
      const stream = await agent.stream({
        messages: [{ role: "user", content: options.question ?? "Run the program." }],
      });
      for await (const event of stream) {
        outcome.events.push(event);
        if (event.type === "answer") outcome.result = event.result;
      }
    } catch (error) {
      outcome.error = error as AgentCase["error"];
    }
  } finally {
    await agent.close();
  }
  outcome.attempts = outcome.result?.attempts ?? outcome.error?.attempts ?? [];
  const starts = outcome.events.filter((event) => event.type === "program-start").length;
  const ends = outcome.events.filter((event) => event.type === "program-end").length;
  expect(ends).toBe(starts);
  const answers = outcome.events.filter((event) => event.type === "answer").length;
  expect(answers + (outcome.error ? 1 : 0)).toBe(1);
  expect(outcome.attempts).toHaveLength(starts);
  for (const [index, attempt] of outcome.attempts.entries()) {
    expect(attempt.program).toBe(options.programs[index]);
    expect(attempt.status).toBeTypeOf("string");
  }
  expect(await containersOfThisProcess()).toEqual([]);
  expectHostUnaffected(before);
  return outcome;
}
