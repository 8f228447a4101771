import { describe, expect, it } from "vitest";
import { RecordingEngine } from "../test/recording-engine.ts";
import { buildLabels, labelKeys } from "./container/labels.ts";
import { SandboxError } from "./errors/sandbox-error.ts";
import { SecurityFlagError } from "./errors/security-flag-error.ts";
import { SandboxManager } from "./manager.ts";

// The manager's own logic through the engine seam, with a recording fake engine (no Docker): what is
// created, started, verified and removed, in what order, on failures and on close. The real engine
// proves the containers themselves (manager.docker.test.ts, session.docker.test.ts).

function fakeManager(config: Record<string, unknown> = {}) {
  const engine = new RecordingEngine();
  const manager = new SandboxManager({ pool: 0, ...config }, { docker: engine });
  return { engine, manager };
}

describe("SandboxManager through the engine seam", () => {
  it("verifies a container before it starts it, and starts its kill helper only after the start", async () => {
    const { engine, manager } = fakeManager();
    const session = await manager.createSession();
    const id = session.containerId;
    const calls = engine.calls.filter((call) => call.endsWith(` ${id}`) || call.includes(` ${id} `));
    expect(calls.indexOf(`create ${id}`)).toBe(0);
    // The read-back of the created container and the lifeline's attach come before the start ...
    expect(calls.indexOf(`inspect ${id}`)).toBeLessThan(calls.indexOf(`start ${id}`));
    expect(calls.indexOf(`attach ${id}`)).toBeLessThan(calls.indexOf(`start ${id}`));
    // ... and the read-back after start and the kill helper come after it.
    expect(calls.lastIndexOf(`inspect ${id}`)).toBeGreaterThan(calls.indexOf(`start ${id}`));
    expect(calls.indexOf(`exec ${id} kill-helper`)).toBeGreaterThan(calls.indexOf(`start ${id}`));
    expect(engine.liveContainers()).toEqual([id]);
    await session.close();
    expect(engine.callsOf("remove")).toEqual([`remove ${id}`]);
    expect(engine.liveContainers()).toEqual([]);
    await manager.close();
  });

  it("refuses a container whose flag did not take, removes it, and frees its slot", async () => {
    const { engine, manager } = fakeManager({ maxConcurrent: 1 });
    engine.dropFlagOnce("ReadonlyRootfs");
    const refusal = await manager.createSession().catch((error: unknown) => error);
    expect(SecurityFlagError.isInstance(refusal)).toBe(true);
    expect(String((refusal as Error).message)).toMatch(/ReadonlyRootfs/);
    const [refused] = engine.callsOf("create").map((call) => call.split(" ")[1]);
    // Never started, and removed before the error left.
    expect(engine.calls).not.toContain(`start ${refused}`);
    expect(engine.calls).toContain(`remove ${refused}`);
    expect(engine.liveContainers()).toEqual([]);
    // With maxConcurrent 1, a slot kept by the failure would make this wait for ever.
    const session = await manager.createSession();
    expect(session.containerId).not.toBe(refused);
    await manager.close();
  });

  it("passes a failed create on to the caller, leaves nothing behind and frees the slot", async () => {
    const { engine, manager } = fakeManager({ maxConcurrent: 1 });
    engine.failNext("create", new Error("no space left on the engine"));
    await expect(manager.createSession()).rejects.toThrow("no space left on the engine");
    expect(engine.liveContainers()).toEqual([]);
    const session = await manager.createSession();
    expect(engine.liveContainers()).toEqual([session.containerId]);
    await manager.close();
  });

  it("removes the created container when its start fails", async () => {
    const { engine, manager } = fakeManager({ maxConcurrent: 1 });
    engine.failNext("start", new Error("OCI runtime create failed"));
    await expect(manager.createSession()).rejects.toThrow("OCI runtime create failed");
    const [created] = engine.callsOf("create").map((call) => call.split(" ")[1]);
    expect(engine.calls).toContain(`remove ${created}`);
    expect(engine.liveContainers()).toEqual([]);
    await (await manager.createSession()).close();
    await manager.close();
  });

  it("close() removes its sessions' containers and leftovers with its id, never another manager's", async () => {
    const { engine, manager } = fakeManager();
    await manager.ready();
    const deadline = new Date(Date.now() + 600_000);
    const other = engine.addContainer(buildLabels({ managerId: "another-live-manager", deadline }));
    const leftover = engine.addContainer(buildLabels({ managerId: manager.managerId, deadline }));
    const first = await manager.createSession();
    const second = await manager.createSession();
    await manager.close();
    expect(engine.calls).toEqual(
      expect.arrayContaining([
        `remove ${first.containerId}`,
        `remove ${second.containerId}`,
        `remove ${leftover}`,
      ]),
    );
    expect(engine.liveContainers()).toEqual([other]);
    const refusal = await manager.createSession().catch((error: unknown) => error);
    expect(SandboxError.isInstance(refusal) && refusal.code).toBe("manager-closed");
  });

  it("labels each container with its manager, its deadline and the caller's labels (not codeaction.*)", async () => {
    const { engine, manager } = fakeManager();
    const session = await manager.createSession({
      deadlineSeconds: 120,
      labels: { team: "data", "codeaction.manager-id": "forged" },
    });
    const labels = engine.labelsOf(session.containerId);
    expect(labels[labelKeys.managerId]).toBe(manager.managerId);
    expect(labels.team).toBe("data");
    const deadline = Date.parse(labels[labelKeys.deadline] ?? "");
    // timing-lint: allowed (the deadline label's value, 120 s from its creation: a setting, not a speed)
    expect(deadline - Date.now()).toBeLessThanOrEqual(120_000);
    expect(deadline - Date.now()).toBeGreaterThan(60_000);
    await manager.close();
  });
});
