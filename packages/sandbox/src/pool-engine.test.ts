import { describe, expect, it, vi } from "vitest";
import { RecordingEngine } from "../test/recording-engine.ts";
import { SandboxManager } from "./manager.ts";

// The warm pool as the manager runs it, through the engine seam with a recording fake engine (no
// Docker): which containers are started ahead of need, which one a session gets, what is refilled
// and what is removed. pool.docker.test.ts proves the same against the real engine.

const warmCommand = ["python3", "-I", "-c", "relay"];

function pooledManager(pool: number) {
  const engine = new RecordingEngine();
  const manager = new SandboxManager({ pool, maxConcurrent: 4 }, { docker: engine, warmCommand });
  return { engine, manager };
}

const execsOf = (engine: RecordingEngine, argv: string[]) =>
  engine.callsOf("exec").filter((call) => call.endsWith(` ${argv.join(" ")}`));

describe("the warm pool through the engine seam", () => {
  it("starts `pool` containers with the warm command waiting, hands one out and refills", async () => {
    const { engine, manager } = pooledManager(2);
    await manager.ready();
    await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(2));
    expect(engine.callsOf("create")).toHaveLength(2);
    expect(execsOf(engine, warmCommand)).toHaveLength(2);
    const session = await manager.createSession();
    // The session got a container that was already there ...
    expect(engine.callsOf("create").slice(0, 2)).toContain(`create ${session.containerId}`);
    // ... and the pool starts one more to be full again.
    await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(2));
    expect(engine.callsOf("create")).toHaveLength(3);
    await manager.close();
  });

  it("hands out the warm command's process already running (takeWarm): no new exec", async () => {
    const { engine, manager } = pooledManager(1);
    await manager.ready();
    await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(1));
    const session = await manager.createSession();
    const execsIn = () =>
      engine.callsOf("exec").filter((call) => call.startsWith(`exec ${session.containerId} `));
    expect(execsIn()).toEqual([
      `exec ${session.containerId} kill-helper`,
      `exec ${session.containerId} ${warmCommand.join(" ")}`,
    ]);
    const relay = session.takeWarm()!.claim();
    relay.stdout.resume();
    relay.stderr.resume();
    relay.stdin.end();
    await relay.exit;
    expect(execsIn()).toHaveLength(2);
    // Any other command is a new exec in the same container.
    const other = session.spawn(["python3", "-c", "other"]);
    other.stdout.resume();
    other.stderr.resume();
    other.stdin.end();
    await other.exit;
    expect(execsIn().slice(2)).toEqual([`exec ${session.containerId} python3 -c other`]);
    await manager.close();
  });

  it("serves a request with a container of its own when the fill failed", async () => {
    const { engine, manager } = pooledManager(1);
    engine.failNext("create", new Error("the engine is busy"));
    await manager.ready();
    const session = await manager.createSession();
    // The failed fill, then the start made for the waiting request.
    expect(engine.callsOf("create")).toHaveLength(2);
    expect(engine.liveContainers()).toContain(session.containerId);
    await manager.close();
  });

  it("replaces a warm container that stopped while it waited instead of handing it out", async () => {
    const { engine, manager } = pooledManager(1);
    await manager.ready();
    await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(1));
    const [stale] = engine.liveContainers();
    engine.stop(stale!);
    // The engine's word that the container ended arrives as an event, after this turn.
    await new Promise((resolve) => setImmediate(resolve));
    const session = await manager.createSession();
    expect(session.containerId).not.toBe(stale);
    expect(engine.calls).toContain(`remove ${stale}`);
    await manager.close();
  });

  it("close() removes the idle warm containers and those handed out", async () => {
    const { engine, manager } = pooledManager(2);
    await manager.ready();
    await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(2));
    await manager.createSession();
    await manager.close();
    expect(engine.liveContainers()).toEqual([]);
    const created = engine.callsOf("create").map((call) => call.split(" ")[1]);
    const removed = engine.callsOf("remove").map((call) => call.split(" ")[1]);
    expect(new Set(removed)).toEqual(new Set(created));
  });
});
