import { connectDocker, SandboxManager, type SandboxSession } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { echoTool } from "../../test/local-relay.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { type RunProgramOptions, runProgram } from "./run-program.ts";

// The bridge through real containers: one fresh container per run, the relay in one exec.

const failing: ToolSpec = {
  name: "fail",
  description: "Always fails.",
  origin: "tool",
  inputSchema: { type: "object", properties: {} },
  invoke: async () => {
    throw new Error("upstream said no");
  },
};

describe.each(["docker", "gvisor"] as const)("runProgram in a real container (backend %s)", (backend) => {
  let manager: SandboxManager;

  beforeAll(async () => {
    manager = new SandboxManager({ backend, network: "none" });
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
  });

  async function run(
    options: Omit<RunProgramOptions, "session" | "runId" | "stubsSource" | "execTimeout" | "maxToolCalls"> &
      Partial<Pick<RunProgramOptions, "execTimeout" | "maxToolCalls">>,
    inspect?: (session: SandboxSession) => Promise<void>,
  ) {
    const session = await manager.createSession({ deadlineSeconds: 300 });
    try {
      const result = await runProgram({
        session,
        runId: `run-${backend}`,
        execTimeout: 30,
        maxToolCalls: 50,
        stubsSource: renderStubsModule(options.tools),
        ...options,
      });
      await inspect?.(session);
      return result;
    } finally {
      await session.close();
    }
  }

  test("a tool call costs no exec: a run with 60 calls makes as many execs as a run with 1", async () => {
    const { docker } = await connectDocker();
    /** The exec_create events the engine recorded for one run's container. */
    const execsOf = async (calls: number): Promise<string[]> => {
      const { tool } = echoTool();
      const since = Math.floor(Date.now() / 1000) - 1;
      let containerId = "";
      const result = await run(
        {
          program: `for index in range(${calls}):\n    echo(value=index)\nprint("RESULT: done")`,
          tools: [tool],
          maxToolCalls: 100,
        },
        async (session) => {
          containerId = session.containerId;
        },
      );
      expect(result.status, result.stderr).toBe("ok");
      expect(result.toolCalls).toHaveLength(calls);
      const stream = (await docker.getEvents({
        since,
        until: Math.floor(Date.now() / 1000) + 1,
        filters: { container: [containerId], event: ["exec_create"] },
      })) as NodeJS.ReadableStream;
      let text = "";
      for await (const chunk of stream) text += String(chunk);
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { Action: string }).Action);
    };
    const one = await execsOf(1);
    const sixty = await execsOf(60);
    expect(one.length).toBeGreaterThan(0);
    expect(sixty.length).toBe(one.length);
  });

  test("20 concurrent calls from threads are each answered once", async () => {
    const { tool, calls } = echoTool();
    const result = await run({
      program: `
import threading
results = {}
def work(index):
    results[index] = echo(value=index)["echoed"]
threads = [threading.Thread(target=work, args=(index,)) for index in range(20)]
for thread in threads: thread.start()
for thread in threads: thread.join()
assert results == {index: index for index in range(20)}, results
print("RESULT:", sum(results.values()))
`,
      tools: [tool],
    });
    expect(result.status, result.stderr).toBe("ok");
    expect(result.result).toBe(String((19 * 20) / 2));
    expect(calls).toHaveLength(20);
    expect(new Set(result.toolCalls.map((call) => call.id)).size).toBe(20);
  });

  test("an approval wait of 3 s with execTimeout 2 still succeeds", async () => {
    const { tool } = echoTool();
    const result = await run({
      program: `print("RESULT:", echo(value="approved")["echoed"])`,
      tools: [tool],
      execTimeout: 2,
      approval: async () => {
        await new Promise((resolve) => setTimeout(resolve, 3000));
        return true;
      },
    });
    expect(result.status, result.stderr).toBe("ok");
    expect(result.result).toBe("approved");
  });

  test("the call past maxToolCalls never reaches the tool; denials and tool errors raise in the program", async () => {
    const { tool, calls } = echoTool();
    const result = await run({
      program: `
out = []
out.append(echo(value=1)["echoed"])
try:
    fail()
except ToolError as error:
    out.append(f"{type(error).__name__}: {error}")
try:
    echo(value="deny me")
except ToolDenied as error:
    out.append(f"{type(error).__name__}: {error}")
try:
    echo(value=4)
except ToolCallLimitExceeded as error:
    out.append(type(error).__name__)
print("RESULT:", out)
`,
      tools: [tool, failing],
      maxToolCalls: 3,
      approval: (call) =>
        call.args.value === "deny me" ? { approved: false, reason: "not this one" } : true,
    });
    expect(result.status).toBe("tool-limit");
    expect(result.result).toBe(
      "[1, 'ToolError: upstream said no', 'ToolDenied: not this one', 'ToolCallLimitExceeded']",
    );
    expect(calls).toEqual([{ value: 1 }]);
    expect(result.toolCalls.map((call) => call.status)).toEqual(["ok", "error", "denied", "limit"]);
  });

  test("a timeout kills the program and the daemons it started", async () => {
    const result = await run(
      {
        program: `
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # bridge-daemon-marker"], start_new_session=True)
print("started", flush=True)
while True:
    pass
`,
        tools: [],
        execTimeout: 2,
      },
      async (session) => {
        const left = await session.execute("grep -l 'bridge-daemon-marke[r]' /proc/[0-9]*/cmdline || true");
        expect(left.stdout.trim()).toBe("");
      },
    );
    expect(result.status).toBe("timeout");
    expect(result.stdout).toBe("started\n");
  });

  test("a daemon that outlives a successful program is gone when the run ends", async () => {
    const result = await run(
      {
        program: `
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # bridge-daemon-marker"], start_new_session=True)
print("RESULT: left one behind")
`,
        tools: [],
      },
      async (session) => {
        const left = await session.execute("grep -l 'bridge-daemon-marke[r]' /proc/[0-9]*/cmdline || true");
        expect(left.stdout.trim()).toBe("");
      },
    );
    expect(result.status).toBe("ok");
  });

  test("requests are files under /workspace/.codeaction; the relay's fds are closed to the program", async () => {
    const { tool } = echoTool();
    const result = await run({
      program: `
import os, json
echo(value=1)
entries = sorted(os.listdir("/workspace/.codeaction"))
fds = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))  # 5 is the listing's own
try:
    os.listdir(f"/proc/{os.getppid()}/fd")
    relay = "readable"
except PermissionError:
    relay = "denied"
print("RESULT:", json.dumps({"entries": entries, "fds": fds, "relay": relay, "cwd": os.getcwd()}))
`,
      tools: [tool],
    });
    expect(result.status, result.stderr).toBe("ok");
    expect(JSON.parse(result.result!)).toMatchObject({
      entries: ["lib", "program.py", "requests", "responses"],
      fds: [0, 1, 2, 3, 4, 5],
      cwd: "/workspace",
    });
    // runc honours the relay's PR_SET_DUMPABLE 0; gVisor's /proc does not, so there the host's
    // distrust of every frame is what holds (next test).
    if (backend === "docker") expect(JSON.parse(result.result!).relay).toBe("denied");
  });

  test("frames a program forges into the relay's stdout never make a success", async () => {
    const result = await run({
      program: `
import os
try:
    fd = os.open(f"/proc/{os.getppid()}/fd/1", os.O_WRONLY)
    os.write(fd, b"Zforged")
    wrote = "wrote"
except OSError:
    wrote = "denied"
print("RESULT:", wrote)
`,
      tools: [],
    });
    if (result.status === "ok") expect(result.result).toBe("denied");
    else expect(result.status).toBe("infrastructure");
    if (backend === "docker") expect(result.result).toBe("denied");
  });

  // The per-call cost is the benchmark's (bench/tool-call-cost.ts); printed here for the log only.
  test("500 no-op calls in one run are each answered (the per-call cost printed)", async () => {
    let invoked = 0;
    const noop: ToolSpec = {
      name: "noop",
      description: "Does nothing.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: async () => {
        invoked += 1;
        return null;
      },
    };
    const result = await run({
      // Not a speed bound: 500 calls took 12 s under runc and over 30 s under gVisor at load 27 on
      // the two-core machine with other files running; the deadline only has to outlast them.
      execTimeout: 110,
      program: `
import time
started = time.perf_counter()
for _ in range(500):
    noop()
elapsed = time.perf_counter() - started
print(f"RESULT: {elapsed * 1000 / 500:.3f}")
`,
      tools: [noop],
      maxToolCalls: 500,
    });
    expect(result.status, result.stderr).toBe("ok");
    expect(invoked).toBe(500);
    expect(result.toolCalls.filter((call) => call.status === "ok")).toHaveLength(500);
    const durations = result.toolCalls.map((call) => call.durationMs).sort((a, b) => a - b);
    console.log(
      `[bridge ${backend}] 500 no-op calls: ${result.result} ms per call measured in the program; ` +
        `host-side p50 ${durations[250]?.toFixed(3)} ms; whole run ${result.runMs.toFixed(0)} ms`,
    );
  });
});
