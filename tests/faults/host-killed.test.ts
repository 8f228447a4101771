import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SandboxManager } from "@codeaction/sandbox";
import { describe, expect, test } from "vitest";
import { labelKeys } from "../../packages/sandbox/src/container/labels.ts";
import { docker } from "../support/harness.ts";

// Catalogue L2: the host process is SIGKILLed mid-run, 20 times (10 under runc, 10 under gVisor).
// Each trial is a child `node` running one code-action turn (execTimeout 5 s); once its program
// runs in its container, the child is SIGKILLed. Within deadline + 10 s no container of the child
// may still run, and after the next manager start (its sweep) none may exist at all.

const childScript = fileURLToPath(new URL("../support/run-turn-child.ts", import.meta.url));
const execTimeout = 5;
const trials = 20;

function startChild(backend: string): { child: ChildProcess; running: Promise<void> } {
  const child = spawn(process.execPath, [childScript, backend, String(execTimeout)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const running = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the child never ran its program: ${output}`)), 60_000);
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("MARK")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("exit", () => {
      clearTimeout(timer);
      if (!output.includes("MARK")) reject(new Error(`the child exited early: ${output}`));
    });
  });
  return { child, running };
}

async function containersOf(pid: number, options: { runningOnly: boolean }): Promise<string[]> {
  const client = await docker();
  const list = await client.listContainers({
    all: !options.runningOnly,
    filters: { label: [`${labelKeys.ownerPid}=${pid}`] },
  });
  return list.map((container) => `${container.Id.slice(0, 12)} ${container.State}`);
}

describe("L2: the host process SIGKILLed mid-run", () => {
  test(`${trials} trials: nothing runs after deadline + 10 s, nothing exists after the next sweep`, async () => {
    const summary: string[] = [];
    for (let trial = 0; trial < trials; trial += 1) {
      const backend = trial % 2 === 0 ? "docker" : "gvisor";
      const { child, running } = startChild(backend);
      await running;
      const pid = child.pid!;
      expect(await containersOf(pid, { runningOnly: true })).toHaveLength(1);
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
      const killedAt = Date.now();
      let stillRunning = await containersOf(pid, { runningOnly: true });
      while (stillRunning.length > 0 && Date.now() - killedAt < (execTimeout + 10) * 1000) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        stillRunning = await containersOf(pid, { runningOnly: true });
      }
      const stoppedAfterMs = Date.now() - killedAt;
      expect(stillRunning, `trial ${trial} (${backend})`).toEqual([]);
      const next = new SandboxManager({ backend });
      await next.ready();
      expect(await containersOf(pid, { runningOnly: false }), `trial ${trial} after the sweep`).toEqual([]);
      await next.close();
      summary.push(`${backend}: stopped ${stoppedAfterMs} ms after the kill`);
    }
    console.info(`[L2] ${summary.join("; ")}`);
  });
});
