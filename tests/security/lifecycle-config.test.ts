import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildAgent, ConfigError } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import {
  RuntimeNotRegisteredError,
  SandboxConfigError,
  SandboxError,
  SandboxManager,
} from "@codeaction/sandbox";
import { describe, expect, test } from "vitest";
import { sandboxOptionNames } from "../../packages/sandbox/src/config.ts";
import { backends, containersOfThisProcess, docker, fenced, runAgentCase } from "../support/harness.ts";

// Catalogue L1 and L4 (L2 and L3 restart things: tests/faults), bad configuration, and a small soak.

const execFileAsync = promisify(execFile);
const childScript = fileURLToPath(new URL("../support/build-agent-child.ts", import.meta.url));

describe.each(backends)("lifecycle (backend %s)", (backend) => {
  test("L1: a run that times out: its container is killed and removed, none with the run's labels remains", async () => {
    const outcome = await runAgentCase({
      backend,
      programs: ["import time\nprint('started', flush=True)\ntime.sleep(10**6)"],
      codeAction: { execTimeout: 2, maxRepairs: 0 },
    });
    expect(outcome.error?.name).toBe("AttemptsExhaustedError");
    expect(outcome.attempts.map((attempt) => attempt.status)).toEqual(["timeout"]);
    expect(outcome.attempts[0]!.stdout).toContain("started");
    // runAgentCase already checked: no container of this process is left after shutdown.
  });

  // How fast these refusals come is measured by the benchmark (bench/fail-fast.ts), not asserted here.
  test("L4: runsc not registered (backend gvisor, runtime name absent) fails closed, naming it", async () => {
    const manager = new SandboxManager({ backend: "gvisor", runtime: "codeaction-absent-runtime" });
    const error = await manager.ready().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(RuntimeNotRegisteredError);
    expect((error as Error).message).toContain("codeaction-absent-runtime");
    expect((error as Error).message).toMatch(/runc/);
    expect(await containersOfThisProcess()).toEqual([]);
    void backend;
  });
});

describe("L4: Docker unreachable fails closed, naming the cause (bench/fail-fast.ts times it)", () => {
  test("a manager whose client points at a missing socket", async () => {
    const Docker = (await docker()).constructor as new (options: { socketPath: string }) => never;
    const manager = new SandboxManager({}, { docker: new Docker({ socketPath: "/nonexistent.sock" }) });
    const error = await manager.ready().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(SandboxError);
    expect((error as SandboxError).code).toBe("docker-unavailable");
    expect((error as Error).message).toMatch(/ENOENT|nonexistent\.sock/);
  });

  test("buildAgent with DOCKER_HOST=unix:///nonexistent.sock: only that endpoint is tried, as the docker CLI does", async () => {
    const { stdout } = await execFileAsync(process.execPath, [childScript, "{}"], {
      env: { ...process.env, DOCKER_HOST: "unix:///nonexistent.sock" },
      timeout: 30_000,
    });
    const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!) as { built: boolean; message?: string };
    expect(outcome.built, "the agent was built on another engine than DOCKER_HOST names").toBe(false);
    expect(outcome.message).toMatch(/pattern 'code-action' requires a working Docker sandbox/);
    expect(outcome.message).toMatch(/nonexistent\.sock.*ENOENT/);
  });
});

describe("bad configuration is refused before anything starts", () => {
  const wrong: Array<[string, unknown]> = [
    ["backend", "kvm"],
    ["backend", 5],
    ["image", ""],
    ["image", 5],
    ["cpuLimit", "2"],
    ["cpuLimit", 0],
    ["cpuLimit", 1000],
    ["memoryLimit", "lots"],
    ["memoryLimit", "1K"],
    ["memoryLimit", true],
    ["diskLimit", "a lot"],
    ["diskLimit", "5T"],
    ["pidsLimit", 1.5],
    ["pidsLimit", 1],
    ["pidsLimit", "256"],
    ["network", "host"],
    ["network", { allow: "example.invalid" }],
    ["persistent", "yes"],
    ["timeout", 0],
    ["timeout", "300"],
    ["workdir", "/etc"],
    ["workdir", "/workspace/../etc"],
    ["env", { "A B": "x" }],
    ["env", { X: 5 }],
    ["env", "X=1"],
    ["user", "admin"],
    ["user", 5],
    ["allowSudo", true],
    ["allowSudo", "no"],
    ["runtime", ""],
    ["runtime", 5],
    ["readOnlyRootfs", "true"],
    ["maxOutputBytes", 0],
    ["maxOutputBytes", "1M"],
    ["pool", -1],
    ["poolCopyLimit", "plenty"],
    ["poolCopyLimit", "2T"],
    ["poolCopyLimit", -1],
    ["maxConcurrent", 0],
    ["maxTotalMemory", "lots"],
    ["maxTotalMemory", "64M"],
    ["poolIdleSeconds", 0],
    ["engine", "tcp://127.0.0.1:2376"],
    ["engine", { hots: "ssh://user@example.invalid" }],
    ["userRange", { first: 0, count: 10 }],
    ["userRange", { first: 60_000, count: 10_000 }],
  ];

  test("every SandboxConfig option is covered", () => {
    const covered = new Set(wrong.map(([field]) => field));
    expect(sandboxOptionNames.filter((name) => !covered.has(name))).toEqual([]);
  });

  test.each(wrong)("%s = %j is refused, naming the field", (field, value) => {
    let error: unknown;
    try {
      new SandboxManager({ [field]: value } as never);
    } catch (failure) {
      error = failure;
    }
    expect(error).toBeInstanceOf(SandboxConfigError);
    expect((error as Error).message).toContain(field);
  });

  test.each([
    ["memory_limit", "memoryLimit"],
    ["networkMode", "network"],
    ["network_mode", "network"],
    ["pidLimit", "pidsLimit"],
    ["readonlyRootfs", "readOnlyRootfs"],
    ["privileged", "Valid options"],
  ])("the misspelling %s is refused with a hint (%s)", (key, hint) => {
    expect(() => new SandboxManager({ [key]: 1 } as never)).toThrow(SandboxConfigError);
    expect(() => new SandboxManager({ [key]: 1 } as never)).toThrow(hint);
  });

  test.each([
    [{ pattern: "code_action" }, "pattern"],
    [{ pattern: "code-action", sandBox: {} }, "sandBox"],
    [{ pattern: "code-action", codeAction: { exec_timeout: 5 } }, "exec_timeout"],
    [{ pattern: "code-action", codeAction: { maxToolCalls: -1 } }, "maxToolCalls"],
    [{ pattern: "tools", codeAction: { execTimeout: 5 } }, "codeAction"],
    [{ pattern: "code-action", sandbox: { network_mode: "host" } }, "network"],
  ])("buildAgent(%j) is refused before any container starts", async (options, field) => {
    const before = await containersOfThisProcess();
    const error = await buildAgent({
      model: new ScriptedChatModel([]),
      ...(options as object),
    } as never).then(
      async (agent) => {
        await agent.close();
        return undefined;
      },
      (failure: unknown) => failure,
    );
    expect(error instanceof ConfigError || error instanceof SandboxConfigError, String(error)).toBe(true);
    expect((error as Error).message).toContain(field);
    expect(await containersOfThisProcess()).toEqual(before);
  });
});

describe.each(backends)("small soak (backend %s)", (backend) => {
  const runs = backend === "docker" ? 30 : 12;
  test(`${runs} sequential code-action runs: every run has its record, fds and containers stay flat`, async () => {
    const programs = Array.from({ length: runs }, (_, index) => `print("RESULT:", ${index} * 2)`);
    const agent = await buildAgent({
      model: new ScriptedChatModel(programs.map(fenced)),
      pattern: "code-action",
      sandbox: { backend, network: "none" },
      codeAction: { maxRepairs: 0, execTimeout: 30 },
    });
    const openFds = () => readdirSync("/proc/self/fd").length;
    const samples: Array<{ run: number; fds: number; containers: number }> = [];
    try {
      for (let index = 0; index < runs; index += 1) {
        const result = await agent.invoke({ messages: [{ role: "user", content: `run ${index}` }] });
        expect(result.answer).toBe(String(index * 2));
        expect(result.attempts).toHaveLength(1);
        expect(result.attempts[0]!.program).toBe(programs[index]);
        if (index === 2 || index === runs - 1) {
          samples.push({ run: index, fds: openFds(), containers: (await containersOfThisProcess()).length });
        }
      }
    } finally {
      await agent.close();
    }
    const [start, end] = samples;
    expect(end!.fds - start!.fds, JSON.stringify(samples)).toBeLessThan(20);
    expect(end!.containers, JSON.stringify(samples)).toBeLessThanOrEqual(3);
    expect(await containersOfThisProcess()).toEqual([]);
  });
});
