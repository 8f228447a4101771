import { spawnSync } from "node:child_process";
import type { ToolSpec } from "@codeaction/core";
import type { SandboxManager, SandboxSession } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ProgramRun } from "../../packages/core/src/program/run-program.ts";
import { ContainerReplaced, leftoverProcesses } from "../../packages/sandbox/test/process-list.ts";
import { backends, docker, hostileMarker, readyManager, resultJson, runCase } from "../support/harness.ts";

// Catalogue R1..R9: resources. A tight manager (64 pids, 192M, 16M disks, half a CPU) for the bombs;
// a default one for the floods and the deadlines. Each run also checks that nothing it started is
// still running in its container afterwards.

const limits = { pidsLimit: 64, memoryLimit: "192M", diskLimit: "16M", cpuLimit: 0.5 } as const;

/** Whether the session's container runs; a container already removed (404) does not, any other failure is thrown. */
async function isRunning(session: SandboxSession): Promise<boolean> {
  return (await inspectUnlessGone(session))?.State.Running === true;
}

/** A container that stopped left nothing running; a running one is listed. */
async function expectNothingLeft(session: SandboxSession): Promise<void> {
  const running = () => isRunning(session);
  if (!(await running())) return;
  const left = await leftoverProcesses(session).catch(async (error: Error) => {
    // gVisor: a bomb can take the whole sandbox down between the check and the listing (the session
    // then replaces the container, so the new one runs).
    if (error instanceof ContainerReplaced || !(await running())) return [];
    throw error;
  });
  expect(left).toEqual([]);
}

/**
 * How a bomb ends under gVisor (seen in six runs of R1 to R3 each on this machine, 2026-12): its
 * tasks are the sentry's, not host processes, so neither the pids limit nor the kernel's OOM killer
 * stops the program itself. Either the sandbox starves until the run's deadline kills it (timeout),
 * or the cgroup's limit takes the sentry down under the relay (infrastructure: the relay's exec
 * stream ends without an exit, its wait failing with `containerManager.WaitPID ... EOF`). Never an
 * answer (ok) or a plain error: either would mean a limit behaves differently (the memory bomb may
 * also end as oom: R3).
 */
function expectGvisorBombStopped(run: ProgramRun, alsoStoppedBy: ProgramRun["status"][] = []): void {
  expect(["timeout", "infrastructure", ...alsoStoppedBy], run.infrastructureError ?? run.stderr).toContain(
    run.status,
  );
  if (run.status === "infrastructure") {
    expect(run.infrastructureError).toMatch(
      /^the relay's output ended before it reported the program's exit/,
    );
  }
}

/** The session's container as the engine reports it; undefined once it is removed (404), any other failure thrown. */
async function inspectUnlessGone(session: SandboxSession) {
  return session.inspect().catch((error: { statusCode?: number }) => {
    if (error.statusCode === 404) return undefined;
    throw error;
  });
}

/**
 * The container's CPU accounting as the engine reads it from the host's cgroup: CPU used by
 * everything in the container (under gVisor: the sentry that runs the program) and the CFS
 * bandwidth periods it was runnable in.
 */
async function cpuAccounting(containerId: string) {
  const client = await docker();
  const stats = await client.getContainer(containerId).stats({ stream: false });
  const { cpu_usage: usage, throttling_data: throttling } = stats.cpu_stats;
  return {
    usedNanoseconds: usage.total_usage,
    periods: throttling.periods,
  };
}

/** Docker turns `--cpus` (NanoCpus) into a CFS quota per fixed 100 ms period. */
const cfsPeriodNanoseconds = 100_000_000;

describe.each(backends)("resources (backend %s)", (backend) => {
  let tight: SandboxManager;
  let roomy: SandboxManager;
  beforeAll(async () => {
    // Under gVisor the pids limit counts the sentry's own host threads, not the program's tasks: 64 is
    // too few for runsc to run at all (every exec fails), so gVisor keeps the default 256.
    const tightConfig = backend === "gvisor" ? { ...limits, pidsLimit: 256 } : limits;
    [tight, roomy] = await Promise.all([readyManager(backend, tightConfig), readyManager(backend)]);
  });
  afterAll(async () => {
    await Promise.all([tight?.close(), roomy?.close()]);
  });

  const bombDeadline = backend === "gvisor" ? 20 : 60;

  /**
   * A bomb calls this tool as it starts (its marker): `neighbourStillWorks` waits for the call, so
   * the neighbour is asked while the bomb runs.
   */
  const bombMarker = () => {
    let started: () => void = () => {};
    const seen = new Promise<void>((resolve) => {
      started = resolve;
    });
    const tool: ToolSpec = {
      name: "bomb_started",
      description: "Called by the bomb as it starts.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: async () => {
        started();
        return "ok";
      },
    };
    return { tool, seen };
  };

  /** While a bomb runs (after its marker): another sandbox still answers, and the host can still start a process. */
  const neighbourStillWorks = (marker: Promise<void>) => async () => {
    await marker;
    const other = await roomy.createSession({ deadlineSeconds: 120 });
    try {
      const result = await other.execute("echo neighbour alive", { timeout: 30 });
      expect(result.stdout).toBe("neighbour alive\n");
    } finally {
      await other.close();
    }
    expect(spawnSync("true").status).toBe(0);
  };

  test("R1: a fork bomb stops at the pids limit; the host and other sandboxes are unaffected", async () => {
    const marker = bombMarker();
    const run = await runCase(tight, {
      tools: [marker.tool],
      program: `
import json, os, time
bomb_started()
main = os.getpid()
refused = 0
started = time.monotonic()
while time.monotonic() - started < 4:
    try:
        os.fork()  # parent and child both keep forking
    except OSError:
        refused += 1
        time.sleep(0.01)
if os.getpid() != main:
    os._exit(0)
print("RESULT:", json.dumps({"refused": refused}))
`,
      during: neighbourStillWorks(marker.seen),
      after: expectNothingLeft,
      execTimeout: bombDeadline,
    });
    if (backend === "docker") {
      expect(resultJson<{ refused: number }>(run).refused).toBeGreaterThan(0);
    } else {
      // The neighbour and the host carried on (during, after); the bomb itself ended as gVisor ends it.
      // Under gVisor every fork also grows the sandbox's own memory: with four test files at a time
      // the memory limit stopped it first once (status oom), which is the sandbox holding all the same.
      expectGvisorBombStopped(run, ["oom"]);
    }
  });

  test("R2: a thread bomb stops at the limit; the host and other sandboxes are unaffected", async () => {
    const marker = bombMarker();
    const run = await runCase(tight, {
      tools: [marker.tool],
      program: `
import json, threading, time
bomb_started()
started = 0
try:
    while started < 100000:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        started += 1
except RuntimeError as error:
    stopped = str(error)
print("RESULT:", json.dumps({"threads": started}))
`,
      during: neighbourStillWorks(marker.seen),
      after: expectNothingLeft,
      execTimeout: bombDeadline,
    });
    if (backend === "docker") {
      expect(resultJson<{ threads: number }>(run).threads).toBeLessThan(limits.pidsLimit);
    } else {
      // As the fork bomb (R1): the memory limit may stop it before the pids limit does.
      expectGvisorBombStopped(run, ["oom"]);
    }
  });

  test("R3: a memory bomb is OOM-killed (status oom, exit 137) and there is no swap", async () => {
    const run = await runCase(tight, {
      program: `
blocks = []
while True:
    blocks.append(bytearray(16 * 1024 * 1024))
`,
      after: async (session) => {
        // A container gVisor's OOM took down may already be swept (stopped containers are garbage).
        const info = await inspectUnlessGone(session);
        if (info) expect(info.HostConfig.MemorySwap).toBe(info.HostConfig.Memory);
        await expectNothingLeft(session);
      },
      execTimeout: bombDeadline,
    });
    if (backend === "docker") {
      expect(run.status).toBe("oom");
      expect(run.exitCode).toBe(137);
    } else {
      // The memory limit is the whole sandbox's under gVisor: it stalls at the limit until the deadline
      // (timeout), or the limit takes the sentry with the program (infrastructure), or, under load with
      // four test files at a time (seen once, 2026-12-02), the engine reports the container OOM-killed:
      // the limit stopped it all the same.
      expectGvisorBombStopped(run, ["oom"]);
    }
  });

  test("R4: filling /workspace and /tmp stops with ENOSPC at the configured size", async () => {
    const outcome = resultJson<Record<string, [string, number]>>(
      await runCase(tight, {
        program: `
import errno, json
outcome = {}
for folder in ["/workspace", "/tmp"]:
    written = 0
    try:
        with open(f"{folder}/${hostileMarker}-fill", "wb") as file:
            while written < 64 * 1024 * 1024:
                file.write(b"x" * 65536)
                file.flush()
                written += 65536
        outcome[folder] = ["no error", written]
    except OSError as error:
        outcome[folder] = [errno.errorcode[error.errno], written]
print("RESULT:", json.dumps(outcome))
`,
      }),
    );
    for (const [folder, [code, written]] of Object.entries(outcome)) {
      expect(code, folder).toBe("ENOSPC");
      expect(written, folder).toBeLessThanOrEqual(16 * 1024 * 1024);
      expect(written, folder).toBeGreaterThan(12 * 1024 * 1024);
    }
  });

  test("R5: 1 GB of stdout, in lines and as one line, is capped with truncated; host memory stays flat", async () => {
    for (const newline of [true, false]) {
      const before = process.memoryUsage().rss;
      const run = await runCase(roomy, {
        program: `
import sys
chunk = (b"y" * 1023 + b"\\n") if ${newline ? "True" : "False"} else b"z" * 1024
block = chunk * 1024
for _ in range(1024):
    sys.stdout.buffer.write(block)
sys.stdout.buffer.flush()
sys.stderr.write("flood done\\n")
`,
        execTimeout: 110,
      });
      const grown = process.memoryUsage().rss - before;
      expect(run.status, run.stderr).toBe("no-result");
      expect(run.truncated).toBe(true);
      expect(run.stdout.length).toBeLessThan(1.5 * 1024 * 1024);
      expect(run.stderr).toContain("flood done");
      expect(grown).toBeLessThan(200 * 1024 * 1024);
    }
  });

  // How soon after the deadline the kill lands is measured by the benchmark (bench/fail-fast.ts).
  test("R6: a busy loop on every core is throttled to the CPU limit and killed at the deadline", async () => {
    let accounting: Awaited<ReturnType<typeof cpuAccounting>> | undefined;
    const outcome = resultJson<{ cpuSeconds: number; wallSeconds: number }>(
      await runCase(tight, {
        after: async (session) => {
          accounting = await cpuAccounting(session.containerId);
        },
        program: `
import json, os, time
started = time.monotonic()
children = []
for _ in range(os.cpu_count() or 2):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + 3
        while time.monotonic() < end:
            pass
        os._exit(0)
    children.append(pid)
cpu = 0.0
for pid in children:
    _, _, usage = os.wait4(pid, 0)
    cpu += usage.ru_utime + usage.ru_stime
print("RESULT:", json.dumps({"cpuSeconds": cpu, "wallSeconds": time.monotonic() - started}))
`,
      }),
    );
    // The host's view (both backends): the kernel counts CFS bandwidth periods only for a cgroup with
    // a CPU quota, and the container never used more than its quota in the periods it ran (a 25%
    // margin for the scheduler's per-CPU slices). Without a limit there are no periods; with a whole
    // CPU the busy cores on an idle machine use twice this quota. (Not "throttled": on a loaded
    // machine the container may never reach its quota.)
    expect(accounting?.periods).toBeGreaterThan(0);
    const quotaNanoseconds = limits.cpuLimit * cfsPeriodNanoseconds;
    expect(accounting?.usedNanoseconds).toBeLessThan((accounting?.periods ?? 0) * quotaNanoseconds * 1.25);
    if (backend === "docker") {
      // The program's own view under runc: its children's CPU time against its wall time. Unthrottled
      // on an idle machine about cores x 3 s. Not under gVisor: its rusage counts the time the sentry's
      // tasks were scheduled in the sandbox, throttled or not (measured here: 4.7 s under --cpus 0.5,
      // 3.9 s without a limit), so only the host's accounting above tells.
      // timing-lint: allowed (CPU time against the run's own wall time: the CPU limit, not a speed)
      expect(outcome.cpuSeconds).toBeLessThan(limits.cpuLimit * outcome.wallSeconds * 1.5 + 0.5);
    }
    const endless = await runCase(tight, {
      program: "while True:\n    pass\n",
      execTimeout: 2,
      after: expectNothingLeft,
    });
    expect(endless.status).toBe("timeout");
  });

  test("R7: stdin is empty, and time.sleep(10**6) is killed at the deadline", async () => {
    const run = await runCase(roomy, {
      program: `
import sys, time
print("stdin held", len(sys.stdin.read()), "bytes", flush=True)
time.sleep(10**6)
`,
      execTimeout: 2,
      after: expectNothingLeft,
    });
    expect(run.status).toBe("timeout");
    expect(run.stdout).toContain("stdin held 0 bytes");
  });

  test("R8: a program that traps SIGTERM (and its children) is still gone at the deadline", async () => {
    const run = await runCase(roomy, {
      program: `
import os, signal, time
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
    signal.signal(number, signal.SIG_IGN)
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        break
print("trapping", flush=True)
while True:
    time.sleep(0.1)
`,
      execTimeout: 2,
      after: expectNothingLeft,
    });
    expect(run.status).toBe("timeout");
  });

  test("R9: a double-forked setsid daemon does not outlive the program", async () => {
    const run = await runCase(roomy, {
      program: `
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for descriptor in range(0, 5):
            try:
                os.close(descriptor)
            except OSError:
                pass
        while True:
            with open("/workspace/${hostileMarker}-heartbeat", "a") as file:
                file.write("beat\\n")
            time.sleep(0.05)
    os._exit(0)
time.sleep(0.5)
print("RESULT: daemon started")
`,
      after: async (session) => {
        await expectNothingLeft(session);
        const size = async () =>
          (await session.listFiles("/workspace")).find((entry) => entry.name.endsWith("heartbeat"))?.size ??
          0;
        const first = await size();
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(first).toBeGreaterThan(0);
        expect(await size()).toBe(first);
      },
    });
    expect(run.status).toBe("ok");
  });
});
