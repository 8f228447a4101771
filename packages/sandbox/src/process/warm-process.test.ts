import { describe, expect, it } from "vitest";
import { finishProcess } from "../../test/finish-process.ts";
import { RecordingEngine } from "../../test/recording-engine.ts";
import { SandboxManager } from "../manager.ts";

// createSession({ command }): the command a cold container starts with, through the engine seam with
// the recording fake (no Docker). The real engine: warm-process.docker.test.ts.
const command = ["python3", "-I", "-c", "relay"];
const commandCall = (id: string) => `exec ${id} ${command.join(" ")}`;

function coldManager() {
  const engine = new RecordingEngine();
  const manager = new SandboxManager({ pool: 0 }, { docker: engine });
  return { engine, manager };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("the command a cold session's container starts with", () => {
  it("goes out after the start and before the kill helper's exec; takeWarm() hands it out once, no other exec", async () => {
    const { engine, manager } = coldManager();
    const session = await manager.createSession({ command: [...command] });
    const id = session.containerId;
    const execs = () => engine.callsOf("exec").filter((call) => call.startsWith(`exec ${id} `));
    expect(engine.calls.indexOf(commandCall(id))).toBeGreaterThan(engine.calls.indexOf(`start ${id}`));
    expect(execs()).toEqual([commandCall(id), `exec ${id} kill-helper`]);
    const handle = session.takeWarm();
    expect(handle?.argv).toEqual(command);
    expect(session.takeWarm()).toBeUndefined();
    await finishProcess(handle!.claim());
    expect(execs()).toEqual([commandCall(id), `exec ${id} kill-helper`]);
    await manager.close();
  });

  it("hands back the very array given as `command`, by which its starter knows it", async () => {
    const { manager } = coldManager();
    const given = [...command];
    const session = await manager.createSession({ command: given });
    expect(session.takeWarm()?.argv).toBe(given);
    await manager.close();
  });

  it("gets nothing on its stdin before the kill helper is ready", async () => {
    const { engine, manager } = coldManager();
    const release = engine.holdKillHelperReady();
    const session = await manager.createSession({ command: [...command] });
    const process = session.takeWarm()!.claim();
    process.stdin.write("the program\n");
    await tick();
    expect(engine.inputOf(commandCall(session.containerId))).toBe("");
    release();
    await process.started;
    await tick();
    expect(engine.inputOf(commandCall(session.containerId))).toBe("the program\n");
    await finishProcess(process);
    await manager.close();
  });

  it("closed unused, it is gone; a spawn of the same argv is never it, but a new exec", async () => {
    const { engine, manager } = coldManager();
    const session = await manager.createSession({ command: [...command] });
    const id = session.containerId;
    await finishProcess(session.spawn([...command]));
    const handle = session.takeWarm();
    handle?.close();
    await finishProcess(session.spawn([...command]));
    const execs = engine.callsOf("exec").filter((call) => call.startsWith(`exec ${id} `));
    expect(execs).toEqual([commandCall(id), `exec ${id} kill-helper`, commandCall(id), commandCall(id)]);
    expect(handle?.argv).toEqual(command);
    await manager.close();
  });

  it("is not started without `command`, nor in a container of the warm pool", async () => {
    const { engine, manager } = coldManager();
    const plain = await manager.createSession();
    expect(engine.callsOf("exec").filter((call) => call.startsWith(`exec ${plain.containerId} `))).toEqual([
      `exec ${plain.containerId} kill-helper`,
    ]);
    await manager.close();
    const pooledEngine = new RecordingEngine();
    const pooled = new SandboxManager({ pool: 1 }, { docker: pooledEngine });
    const session = await pooled.createSession({ command: [...command] });
    expect(pooledEngine.calls).not.toContain(commandCall(session.containerId));
    await pooled.close();
  });

  it("refuses a command that is not a non-empty list of strings, naming the fix, and starts nothing", async () => {
    const { engine, manager } = coldManager();
    for (const bad of [[], ["python3", 3], "python3 -c pass", ["a\0b"]]) {
      await expect(manager.createSession({ command: bad as string[] })).rejects.toMatchObject({
        code: "invalid-option",
        message: expect.stringMatching(/non-empty array of strings/),
      });
    }
    await expect(manager.createSession({ command: ["x".repeat(2 * 1024 * 1024)] })).rejects.toThrow(
      /over the 1048576 bytes allowed/,
    );
    expect(engine.callsOf("create")).toEqual([]);
    await manager.close();
  });
});
