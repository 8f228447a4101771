// How fast the sandbox fails closed and meets its deadlines: the timings the security tests once
// asserted (issue 36 moved them here; the tests keep the functional checks). Each figure has the
// bound the tests used as its target.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { ToolSpec } from "@codeaction/core";
import { SandboxManager } from "@codeaction/sandbox";
import Dockerode from "dockerode";
import { runProgram } from "../packages/core/src/program/run-program.ts";
import { renderStubsModule } from "../packages/core/src/prompt/python-stubs.ts";

const run = promisify(execFile);
const buildAgentChild = fileURLToPath(new URL("../tests/support/build-agent-child.ts", import.meta.url));

export type FailFastSamples = {
  /** ready() refusing a runtime name the engine does not know (backend gvisor). */
  runtimeRefusalMs: number[];
  /** ready() refusing a client whose socket does not exist. */
  socketRefusalMs: number[];
  /** buildAgent in its own process with DOCKER_HOST at a missing socket, measured in that process. */
  buildAgentRefusalMs: number[];
  /** getaddrinfo("example.invalid") failing inside the sandbox (no resolver reachable). */
  dnsFailureMs: number[];
  /** A program sleeping past execTimeout 2 s: the run's time beyond its 2 s. */
  deadlineOverrunMs: number[];
  /** The longest gap of this process's event loop while one program makes 1,000 bridged calls. */
  eventLoopStallMs: number[];
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work().catch(() => undefined);
  return performance.now() - started;
}

/** Runs one program in a fresh session of `manager`, as code-action does. */
async function runIn(manager: SandboxManager, program: string, tools: ToolSpec[], execTimeout: number) {
  const session = await manager.createSession({ deadlineSeconds: 600 });
  try {
    return await runProgram({
      session,
      program,
      stubsSource: renderStubsModule(tools),
      tools,
      runId: `fail-fast-${Date.now()}`,
      execTimeout,
      maxToolCalls: 1000,
    });
  } finally {
    await session.close();
  }
}

const echo: ToolSpec = {
  name: "echo",
  description: "Returns the value it was given.",
  origin: "tool",
  inputSchema: { type: "object", properties: { value: {} } },
  invoke: async (args) => ({ echoed: args.value ?? null }),
};

const thousandCalls = `
import threading
def work(offset):
    for index in range(offset, 1000, 8):
        echo(value=index)
threads = [threading.Thread(target=work, args=(offset,)) for offset in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print("RESULT: done")
`;

const dnsProbe = `
import json, socket, time
started = time.monotonic()
try:
    socket.getaddrinfo("example.invalid", 80)
except socket.gaierror:
    pass
print("RESULT:", json.dumps((time.monotonic() - started) * 1000))
`;

/** The longest event-loop gap while `work` runs (a 10 ms ticker). */
async function longestStall(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(ticker);
  }
  return longest;
}

export async function measureFailFast(options: {
  rounds: number;
  onProgress?: (message: string) => void;
}): Promise<FailFastSamples> {
  const samples: FailFastSamples = {
    runtimeRefusalMs: [],
    socketRefusalMs: [],
    buildAgentRefusalMs: [],
    dnsFailureMs: [],
    deadlineOverrunMs: [],
    eventLoopStallMs: [],
  };
  const manager = new SandboxManager({ network: "none" });
  await manager.ready();
  try {
    for (let round = 0; round < options.rounds; round += 1) {
      samples.runtimeRefusalMs.push(
        await timed(() =>
          new SandboxManager({ backend: "gvisor", runtime: "codeaction-absent-runtime" }).ready(),
        ),
      );
      const missing = new Dockerode({ socketPath: "/nonexistent.sock" });
      samples.socketRefusalMs.push(await timed(() => new SandboxManager({}, { docker: missing }).ready()));
      const { stdout } = await run(process.execPath, [buildAgentChild, "{}"], {
        env: { ...process.env, DOCKER_HOST: "unix:///nonexistent.sock" },
        timeout: 30_000,
      });
      samples.buildAgentRefusalMs.push(
        (JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { milliseconds: number }).milliseconds,
      );
      const dns = await runIn(manager, dnsProbe, [], 30);
      samples.dnsFailureMs.push(Number(dns.result));
      const sleeper = await runIn(manager, "import time\ntime.sleep(10**6)", [], 2);
      samples.deadlineOverrunMs.push(sleeper.runMs - 2000);
      samples.eventLoopStallMs.push(await longestStall(() => runIn(manager, thousandCalls, [echo], 110)));
      options.onProgress?.(`fail-fast round ${round + 1}/${options.rounds}`);
    }
  } finally {
    await manager.close();
  }
  return samples;
}
