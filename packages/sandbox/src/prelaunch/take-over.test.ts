import { describe, expect, it } from "vitest";
import { RecordingEngine } from "../../test/recording-engine.ts";
import { parseSandboxConfig, type SandboxConfigInput } from "../config.ts";
import { buildLabels } from "../container/labels.ts";
import { launchForHandover } from "../container/launch.ts";
import { allocateIdentity } from "../container/user-ids.ts";
import { SandboxManager } from "../manager.ts";
import type { PrelaunchedContainer, SandboxPrelaunch } from "./prelaunch.ts";

// How a manager takes over a prelaunched container, through the engine seam with a recording fake
// engine (no Docker, no worker thread): a stand-in prelaunch launches its container the way the
// worker does (launchForHandover, through the same engine). prelaunch.docker.test.ts proves the
// worker and the take-over against the real engine.

const settings: SandboxConfigInput = { pool: 0 };

type StandIn = { prelaunch: SandboxPrelaunch; containerId: () => Promise<string>; closed: () => boolean };

/** A prelaunch whose "worker" launched a container through `engine` (or failed, with `failure`). */
function standInPrelaunch(
  engine: RecordingEngine,
  options: { failure?: string; labelledFor?: string; image?: string } = {},
): StandIn {
  const managerId = `prelaunch-${Math.random().toString(16).slice(2)}`;
  const config = parseSandboxConfig(settings);
  let taken = false;
  let closed = false;
  let startedNow: (containerId: string | undefined) => void = () => undefined;
  const started = new Promise<string | undefined>((resolve) => (startedNow = resolve));
  const launching = (async (): Promise<PrelaunchedContainer | undefined> => {
    if (options.failure) return undefined;
    // The worker thread holds its uid in its own thread: not held in this one.
    const identity = allocateIdentity(config);
    identity.release();
    const deadline = new Date(Date.now() + 3_600_000);
    const launched = await launchForHandover(
      engine,
      { ...identity.config, ...(options.image ? { image: options.image } : {}) },
      {
        labels: buildLabels({ managerId: options.labelledFor ?? managerId, deadline }),
        deadline,
        imageEnv: engine.image.env,
        // As the worker reports it: the container started, its read-back still to come.
        onStarted: startedNow,
      },
    );
    return {
      containerId: launched.containerId,
      user: identity.config.user ?? "",
      lifeline: launched.lifeline,
      placed: Promise.resolve([]),
      mounted: [],
    };
  })();
  const prelaunch = {
    managerId,
    config: settings,
    failure: options.failure,
    take: async () => {
      if (taken) return undefined;
      taken = true;
      return launching;
    },
    checkedEngine: async () => undefined,
    startedContainer: () =>
      Promise.race([
        started,
        launching.then(
          (container) => container?.containerId,
          () => undefined,
        ),
      ]),
    onPlacing: () => undefined,
    close: async () => {
      closed = true;
      if (taken) return;
      taken = true;
      const container = await launching;
      if (container) await engine.getContainer(container.containerId).remove({ force: true });
    },
  };
  return {
    prelaunch: prelaunch as unknown as SandboxPrelaunch,
    containerId: async () => (await launching)?.containerId ?? "",
    closed: () => closed,
  };
}

function managerWith(
  engine: RecordingEngine,
  standIn: StandIn,
  options: { warmCommand?: string[]; pool?: number } = {},
) {
  return new SandboxManager(
    { ...settings, pool: options.pool ?? 0 },
    {
      docker: engine,
      prelaunch: standIn.prelaunch,
      ...(options.warmCommand ? { warmCommand: options.warmCommand } : {}),
    },
  );
}

describe("taking over a prelaunched container", () => {
  it("hands the prelaunched container to the first session, read back and with a kill helper started here", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine);
    const prelaunched = await standIn.containerId();
    const manager = managerWith(engine, standIn);
    expect(manager.managerId).toBe(standIn.prelaunch.managerId);
    const callsBefore = engine.calls.length;
    const session = await manager.createSession();
    expect(session.containerId).toBe(prelaunched);
    const taking = engine.calls.slice(callsBefore);
    expect(taking).not.toContain(expect.stringMatching(/^create /));
    expect(taking).toEqual(
      expect.arrayContaining([`inspect ${prelaunched}`, `exec ${prelaunched} kill-helper`]),
    );
    // The second session starts its own.
    const second = await manager.createSession();
    expect(second.containerId).not.toBe(prelaunched);
    await manager.close();
    expect(engine.liveContainers()).toEqual([]);
  });

  it("starts its own container when the prelaunch failed", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine, { failure: "the worker ended before its container started" });
    const manager = managerWith(engine, standIn);
    const session = await manager.createSession();
    expect(engine.callsOf("create")).toEqual([`create ${session.containerId}`]);
    await manager.close();
  });

  it("removes a prelaunched container labelled for another manager, with the warm command started in it, and starts its own", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine, { labelledFor: "someone-else" });
    const prelaunched = await standIn.containerId();
    const warmCommand = ["python3", "-I", "-c", "relay"];
    const manager = managerWith(engine, standIn, { warmCommand });
    const session = await manager.createSession();
    expect(session.containerId).not.toBe(prelaunched);
    // Its warm command went out when it started, before the read-back found the label.
    expect(engine.calls).toContain(`exec ${prelaunched} ${warmCommand.join(" ")}`);
    expect(engine.calls).toContain(`remove ${prelaunched}`);
    expect(engine.liveContainers()).toEqual([session.containerId]);
    await manager.close();
  });

  it("removes a prelaunched container of another image and starts its own", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine, { image: "codeaction/python:3.11-data" });
    const prelaunched = await standIn.containerId();
    const manager = managerWith(engine, standIn);
    const session = await manager.createSession();
    expect(session.containerId).not.toBe(prelaunched);
    expect(engine.calls).toContain(`remove ${prelaunched}`);
    await manager.close();
  });

  it("keeps the prelaunched container from a session with its own labels, and close() closes the prelaunch", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine);
    const prelaunched = await standIn.containerId();
    const manager = managerWith(engine, standIn);
    const session = await manager.createSession({ labels: { team: "data" } });
    expect(session.containerId).not.toBe(prelaunched);
    expect(engine.liveContainers()).toContain(prelaunched);
    await manager.close();
    expect(standIn.closed()).toBe(true);
    expect(engine.liveContainers()).toEqual([]);
  });

  it("with a warm command and no pool, makes the prelaunched container warm at ready(): its warm process needs no exec", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine);
    const prelaunched = await standIn.containerId();
    const warmCommand = ["python3", "-I", "-c", "relay"];
    const manager = managerWith(engine, standIn, { warmCommand });
    await manager.ready();
    const session = await manager.createSession();
    expect(session.containerId).toBe(prelaunched);
    const execs = () => engine.callsOf("exec").filter((call) => call.startsWith(`exec ${prelaunched} `));
    // The warm command went out when the container started, before the take-over's kill helper.
    expect(execs()).toEqual([
      `exec ${prelaunched} ${warmCommand.join(" ")}`,
      `exec ${prelaunched} kill-helper`,
    ]);
    const relay = session.takeWarm()!.claim();
    relay.stdout.resume();
    relay.stderr.resume();
    relay.stdin.end();
    await relay.exit;
    expect(execs()).toHaveLength(2);
    expect(engine.callsOf("create")).toEqual([`create ${prelaunched}`]);
    await manager.close();
  });

  it("with a pool, the prelaunched container is the pool's first warm container", async () => {
    const engine = new RecordingEngine();
    const standIn = standInPrelaunch(engine);
    const prelaunched = await standIn.containerId();
    const manager = managerWith(engine, standIn, { pool: 1, warmCommand: ["python3", "-c", "relay"] });
    await manager.ready();
    const session = await manager.createSession();
    expect(session.containerId).toBe(prelaunched);
    await manager.close();
    expect(engine.liveContainers()).toEqual([]);
  });
});
