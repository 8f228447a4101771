import { describe, expect, it, vi } from "vitest";
import { finishProcess } from "../test/finish-process.ts";
import { RecordingEngine } from "../test/recording-engine.ts";
import { SandboxManager } from "./manager.ts";

// session.takeWarm(): the warm command's process handed out explicitly, once, through the engine
// seam with the recording fake (no Docker). Core's relay-process.ts claims it or closes it.
const warmCommand = ["python3", "-I", "-c", "relay"];

async function pooledSession() {
  const engine = new RecordingEngine();
  const manager = new SandboxManager({ pool: 1, maxConcurrent: 4 }, { docker: engine, warmCommand });
  await manager.ready();
  await vi.waitFor(() => expect(manager.poolStatus().idle).toBe(1));
  const session = await manager.createSession();
  const execsIn = () =>
    engine.callsOf("exec").filter((call) => call.startsWith(`exec ${session.containerId} `));
  return { engine, manager, session, execsIn };
}

describe("the warm process a pooled session hands out", () => {
  it("is handed out once, with the manager's warm command; claimed, it is the process already running", async () => {
    const { manager, session, execsIn } = await pooledSession();
    const handle = session.takeWarm();
    expect(handle?.argv).toEqual(warmCommand);
    expect(session.takeWarm()).toBeUndefined();
    await finishProcess(handle!.claim());
    // The kill helper and the warm command: no exec for the claimed process.
    expect(execsIn()).toEqual([
      `exec ${session.containerId} kill-helper`,
      `exec ${session.containerId} ${warmCommand.join(" ")}`,
    ]);
    await manager.close();
  });

  it("closed unused, it is gone: the same command is then a new exec", async () => {
    const { manager, session, execsIn } = await pooledSession();
    session.takeWarm()?.close();
    await finishProcess(session.spawn([...warmCommand]));
    expect(execsIn().slice(2)).toEqual([`exec ${session.containerId} ${warmCommand.join(" ")}`]);
    await manager.close();
  });

  it("is never taken by a spawn of the same argv: that spawn is a new exec, and the warm process still waits, its argv the very array given", async () => {
    const { manager, session, execsIn } = await pooledSession();
    await finishProcess(session.spawn([...warmCommand]));
    expect(execsIn().slice(2)).toEqual([`exec ${session.containerId} ${warmCommand.join(" ")}`]);
    const handle = session.takeWarm();
    expect(handle?.argv).toBe(warmCommand);
    await finishProcess(handle!.claim());
    expect(execsIn()).toHaveLength(3);
    await manager.close();
  });

  it("an ordinary session (no pool) has none", async () => {
    const engine = new RecordingEngine();
    const manager = new SandboxManager({ pool: 0 }, { docker: engine, warmCommand });
    const session = await manager.createSession();
    expect(session.takeWarm()).toBeUndefined();
    await manager.close();
  });
});
