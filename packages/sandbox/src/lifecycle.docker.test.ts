import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import Dockerode from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { labelKeys } from "./container/labels.ts";
import { SandboxManager } from "./manager.ts";

const docker = new Dockerode({ socketPath: "/var/run/docker.sock" });
const ownerScript = fileURLToPath(new URL("../test/fixtures/session-owner.ts", import.meta.url));
const children: ChildProcess[] = [];
const containers: string[] = [];

/** Starts a host process that owns one session; resolves with its container id once created. */
async function startOwner(deadlineSeconds: number): Promise<{ child: ChildProcess; containerId: string }> {
  const child = spawn(process.execPath, [ownerScript, String(deadlineSeconds)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const deadline = Date.now() + 60_000;
  while (!output.includes("\n")) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the owner process failed: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { containerId } = JSON.parse(output.split("\n")[0]!) as { containerId: string };
  containers.push(containerId);
  return { child, containerId };
}

async function state(containerId: string): Promise<"running" | "stopped" | "gone"> {
  try {
    const info = await docker.getContainer(containerId).inspect();
    return info.State.Running ? "running" : "stopped";
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return "gone";
    throw error;
  }
}

async function waitUntilNotRunning(containerId: string, withinMs: number): Promise<number> {
  const startedAt = Date.now();
  while (Date.now() - startedAt < withinMs) {
    if ((await state(containerId)) !== "running") return Date.now() - startedAt;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return Number.POSITIVE_INFINITY;
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all(
    containers.map((id) =>
      docker
        .getContainer(id)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
});

describe("lifecycle: nothing left behind", () => {
  it("labels every container with the manager, the owner process, the boot id and the deadline", async () => {
    await using manager = new SandboxManager();
    const before = Date.now();
    const session = await manager.createSession({ deadlineSeconds: 120, labels: { purpose: "label-test" } });
    containers.push(session.containerId);
    const labels = (await session.inspect()).Config.Labels;
    expect(labels[labelKeys.managed]).toBe("true");
    expect(labels[labelKeys.managerId]).toBe(manager.managerId);
    expect(labels[labelKeys.ownerPid]).toBe(String(process.pid));
    expect(labels[labelKeys.ownerStart]).toMatch(/^\d+$/);
    expect(labels[labelKeys.bootId]).toMatch(/^[0-9a-f-]{36}$/);
    const deadline = Date.parse(labels[labelKeys.deadline] ?? "");
    expect(deadline - before).toBeGreaterThanOrEqual(119_000);
    expect(deadline - before).toBeLessThan(130_000);
    expect(labels.purpose).toBe("label-test");
  });

  it("ends a container at its deadline by itself, although its owner lives", async () => {
    const manager = new SandboxManager();
    const session = await manager.createSession({ deadlineSeconds: 4 });
    containers.push(session.containerId);
    const waited = await waitUntilNotRunning(session.containerId, 4_000 + 10_000);
    expect(waited).toBeLessThan(14_000);
    // The next command notices and replaces the container (new deadline: the old one has passed).
    await expect(session.execute("true")).rejects.toMatchObject({ code: "session-expired" });
    await manager.cleanupAll();
    expect(await state(session.containerId)).toBe("gone");
  });

  it("a SIGKILLed owner leaves no running container after deadline + 10 s, and none after the next sweep", async () => {
    const deadlineSeconds = 20;
    const { child, containerId } = await startOwner(deadlineSeconds);
    expect(await state(containerId)).toBe("running");
    const killedAt = Date.now();
    child.kill("SIGKILL");
    await once(child, "exit");
    const waited = await waitUntilNotRunning(containerId, deadlineSeconds * 1000 + 10_000);
    expect(waited).toBeLessThan(deadlineSeconds * 1000 + 10_000);
    console.log(`container stopped ${Date.now() - killedAt} ms after its owner was SIGKILLed`);
    const manager = new SandboxManager();
    await manager.ready();
    const swept = await manager.sweep();
    expect(await state(containerId)).toBe("gone");
    expect(swept.map((entry) => entry.containerId)).not.toContain(undefined);
    await manager.cleanupAll();
  });

  it("two managers in two processes never reap each other's live containers", async () => {
    const parent = new SandboxManager();
    const mine = await parent.createSession({ deadlineSeconds: 300 });
    containers.push(mine.containerId);
    // The child's ready() sweeps: it must leave the parent's container alone.
    const { child, containerId: theirs } = await startOwner(300);
    expect(await state(mine.containerId)).toBe("running");
    // A third manager in this process sweeps: both live containers stay.
    const third = new SandboxManager();
    await third.ready();
    await third.sweep();
    expect(await state(mine.containerId)).toBe("running");
    expect(await state(theirs)).toBe("running");
    expect((await mine.execute("echo alive")).stdout).toBe("alive\n");
    child.kill("SIGKILL");
    await once(child, "exit");
    await third.sweep();
    expect(await state(theirs)).toBe("gone");
    expect(await state(mine.containerId)).toBe("running");
    await parent.cleanupAll();
    expect(await state(mine.containerId)).toBe("gone");
  });
});
