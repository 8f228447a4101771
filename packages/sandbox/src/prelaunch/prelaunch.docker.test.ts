import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Dockerode from "dockerode";
import pino from "pino";
import { afterAll, describe, expect, test, vi } from "vitest";
import { containerActions } from "../../test/container-actions.ts";
import { readAll } from "../../test/read-all.ts";
import { labelKeys } from "../container/labels.ts";
import type { PlacingProgress } from "../files/place-files.ts";
import { SandboxManager } from "../manager.ts";
import { SandboxPrelaunch } from "./index.ts";

// A container started in a worker thread (the CLI starts one while LangChain loads) and taken over
// by the manager built later: read back again here, removed when it differs, never left behind.
const docker = new Dockerode({ socketPath: "/var/run/docker.sock" });
const ownerScript = fileURLToPath(new URL("../../test/fixtures/prelaunch-owner.ts", import.meta.url));
const managers: SandboxManager[] = [];
const leftovers: string[] = [];

afterAll(async () => {
  await Promise.allSettled(managers.map((manager) => manager.close()));
  await Promise.allSettled(leftovers.map((id) => docker.getContainer(id).remove({ force: true })));
});

type ContainerEvent = { action: string; id: string };

/** The engine's container events for one manager id since `since` (seconds), in order. */
async function eventsOf(managerId: string, since: number): Promise<ContainerEvent[]> {
  const stream = await docker.getEvents({
    since,
    until: Math.floor(Date.now() / 1000) + 1,
    filters: { type: ["container"], label: [`${labelKeys.managerId}=${managerId}`] },
  });
  let text = "";
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString();
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { Action: string; id: string })
    .map((event) => ({ action: event.Action, id: event.id }));
}

async function containersOf(managerId: string): Promise<string[]> {
  const listed = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.managerId}=${managerId}`] },
  });
  return listed.map((summary) => summary.Id);
}

/** The manager's debug line for a warm command started at a prelaunched container's start. */
const startedEarly = "warm command started at the prelaunched container's start";

/** A debug logger that keeps its messages. */
function keptLogger(): { logger: pino.Logger; messages: string[] } {
  const messages: string[] = [];
  const destination = { write: (line: string) => messages.push(String(JSON.parse(line).msg)) };
  return { logger: pino({ level: "debug" }, destination), messages };
}

const trustedChecks = "engine checks: the prelaunch's, same settings";

function created(events: ContainerEvent[]): string[] {
  return events.filter((event) => event.action === "create").map((event) => event.id);
}

describe("a prelaunched container", () => {
  test("is the first session's container: one create in all, every flag read back, nothing left", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const prelaunch = SandboxPrelaunch.start({ network: "none" });
    const { logger, messages } = keptLogger();
    // Its pool's settings differ from the prelaunch's (which the engine checks do not read).
    const manager = new SandboxManager(
      { network: "none", pool: 0, poolCopyLimit: "1G" },
      { prelaunch, logger },
    );
    managers.push(manager);
    expect(manager.managerId).toBe(prelaunch.managerId);
    // The worker's engine checks (same settings, same engine) are not made again.
    await manager.ready();
    expect(messages).toContain(trustedChecks);
    const session = await manager.createSession();
    const { stdout } = await session.execute("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; id -u");
    expect(stdout).toMatch(/CapEff:\s+0{16}/);
    expect(stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(Number(stdout.trim().split("\n").at(-1))).toBeGreaterThanOrEqual(manager.config.userRange.first);
    // A second session is the manager's own launch.
    const second = await manager.createSession();
    await manager.close();
    const events = await eventsOf(manager.managerId, since);
    expect(created(events)).toEqual([session.containerId, second.containerId]);
    expect(prelaunch.failure).toBeUndefined();
    expect(await containersOf(manager.managerId)).toEqual([]);
  });

  test("fills a warm pool's first place; the pool's refill is the manager's own", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const prelaunch = SandboxPrelaunch.start({ network: "none" });
    const manager = new SandboxManager({ network: "none", pool: 1 }, { prelaunch });
    managers.push(manager);
    const session = await manager.createSession();
    expect((await session.execute("echo pooled")).stdout).toBe("pooled\n");
    await manager.close();
    const ids = created(await eventsOf(manager.managerId, since));
    expect(ids[0]).toBe(session.containerId);
    expect(await containersOf(manager.managerId)).toEqual([]);
  });

  test("without a pool, is made warm by ready(): its warm command starts with the container, before the take-over's read-back; the first session gets it", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const prelaunch = SandboxPrelaunch.start({ network: "none" });
    const { logger, messages } = keptLogger();
    const manager = new SandboxManager(
      { network: "none", pool: 0 },
      { prelaunch, logger, warmCommand: ["sh", "-c", "echo warm-$$; cat"] },
    );
    managers.push(manager);
    await manager.ready();
    // Taken over in the background: its kill helper starts with nobody asking for a session.
    await vi.waitFor(() => expect(messages).toContain("kill helper ready"), { timeout: 60_000 });
    const session = await manager.createSession();
    // A process started now gets a higher pid than any started before it (a fresh pid namespace).
    const checkPid = Number((await session.execute("echo $$")).stdout.trim());
    const process = session.takeWarm()!.claim();
    const output = readAll(process.stdout);
    process.stderr.resume();
    process.stdin.end("hello");
    // takeWarm() handed out the warm command, started before that check, not a new process.
    const [first, second] = (await output).split("\n");
    expect(second).toBe("hello");
    expect(Number(first!.replace("warm-", ""))).toBeLessThan(checkPid);
    // Started the moment the worker reported the container started, not after the take-over.
    expect(messages).toContain(startedEarly);
    expect((await process.exit).exitCode).toBe(0);
    await manager.close();
    expect(created(await eventsOf(manager.managerId, since))).toEqual([session.containerId]);
    expect(await containersOf(manager.managerId)).toEqual([]);
  });

  test("made warm and closed before any session: removed, nothing left", async () => {
    const prelaunch = SandboxPrelaunch.start({ network: "none" });
    const { logger, messages } = keptLogger();
    const manager = new SandboxManager(
      { network: "none", pool: 0 },
      { prelaunch, logger, warmCommand: ["cat"] },
    );
    managers.push(manager);
    await manager.ready();
    await vi.waitFor(() => expect(messages).toContain("kill helper ready"), { timeout: 60_000 });
    expect(await containersOf(manager.managerId)).toHaveLength(1);
    await manager.close();
    expect(await containersOf(manager.managerId)).toEqual([]);
    await expect(manager.createSession()).rejects.toThrow(/cleaned up/);
  });

  test("started with other settings is removed, its warm command never started in it, and the session gets a container of its own", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const prelaunch = SandboxPrelaunch.start({ network: "none", memoryLimit: "256m" });
    const { logger, messages } = keptLogger();
    const manager = new SandboxManager(
      { network: "none", memoryLimit: "512m", pool: 0 },
      { prelaunch, logger, warmCommand: ["sh", "-c", "echo warm; cat"] },
    );
    managers.push(manager);
    const session = await manager.createSession();
    expect(messages).not.toContain(trustedChecks);
    // Nothing of the manager's runs in a container started with other settings; the session's own
    // container has its warm command.
    expect(messages).not.toContain(startedEarly);
    const warm = session.takeWarm()!.claim();
    const output = readAll(warm.stdout);
    warm.stderr.resume();
    warm.stdin.end("own");
    expect(await output).toBe("warm\nown");
    const inspected = await session.inspect();
    expect(inspected.HostConfig.Memory).toBe(512 * 1024 * 1024);
    await manager.close();
    const events = await eventsOf(manager.managerId, since);
    const [prelaunched, own] = created(events);
    expect(own).toBe(session.containerId);
    expect(events).toContainEqual({ action: "destroy", id: prelaunched });
    expect(await containersOf(manager.managerId)).toEqual([]);
  });

  test("closed before anyone takes it is removed; one that failed says why and creates nothing", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const untaken = SandboxPrelaunch.start({ network: "none" });
    // Its worker made its container (what close() must remove) before it is closed.
    await expect.poll(() => containersOf(untaken.managerId), { timeout: 60_000 }).toHaveLength(1);
    await untaken.close();
    const events = await eventsOf(untaken.managerId, since);
    const made = created(events);
    expect(made).toHaveLength(1);
    expect(events).toContainEqual({ action: "destroy", id: made[0] });
    expect(await containersOf(untaken.managerId)).toEqual([]);

    const failing = SandboxPrelaunch.start({ network: "none", image: "codeaction/no-such-image:1" });
    expect(await failing.take()).toBeUndefined();
    expect(failing.failure).toContain("codeaction/no-such-image:1");
    expect(created(await eventsOf(failing.managerId, since))).toEqual([]);
  });

  test("whose engine checks failed: the manager makes them itself and reports the engine's answer", async () => {
    const settings = { network: "none", runtime: "codeaction-no-such-runtime" } as const;
    const prelaunch = SandboxPrelaunch.start(settings);
    const manager = new SandboxManager({ ...settings, pool: 0 }, { prelaunch });
    managers.push(manager);
    await expect(manager.ready()).rejects.toMatchObject({ code: "runtime-not-registered" });
    expect(prelaunch.failure).toContain("codeaction-no-such-runtime");
  });
});

describe("files a prelaunch places", () => {
  let folder = "";
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  test("are in the container once filesPlaced() settles, byte for byte, read-only in a sealed folder", async () => {
    folder = await mkdtemp(join(tmpdir(), "codeaction-prelaunch-files-"));
    const big = randomBytes(9 * 1024 * 1024);
    await writeFile(join(folder, "big-target.bin"), big);
    await writeFile(join(folder, "small-target.csv"), "a,b\n1,2\n");
    // Links: a link is never mounted, so these take the copy's way.
    await symlink(join(folder, "big-target.bin"), join(folder, "big.bin"));
    await symlink(join(folder, "small-target.csv"), join(folder, "small.csv"));
    const prelaunch = SandboxPrelaunch.start(
      { network: "none" },
      {
        files: [join(folder, "big.bin"), join(folder, "small.csv")],
      },
    );
    const reports: PlacingProgress[] = [];
    prelaunch.onPlacing((progress) => reports.push(progress));
    const manager = new SandboxManager({ network: "none", pool: 0 }, { prelaunch });
    managers.push(manager);
    const session = await manager.createSession();
    expect(await session.filesPlaced()).toEqual([
      { containerPath: "/workspace/data/big.bin", bytes: big.length, how: "copied" },
      { containerPath: "/workspace/data/small.csv", bytes: 8, how: "copied" },
    ]);
    const { stdout } = await session.execute(
      "sha256sum /workspace/data/big.bin; stat -c '%a %n' /workspace/data /workspace/data/*; touch /workspace/data/new 2>/dev/null || echo sealed",
    );
    expect(stdout).toContain(createHash("sha256").update(big).digest("hex"));
    expect(stdout).toContain(
      "555 /workspace/data\n444 /workspace/data/big.bin\n444 /workspace/data/small.csv",
    );
    expect(stdout).toContain("sealed");
    // Every 4 MiB of the big file, and each file's end.
    const bigReports = reports.filter((report) => report.containerPath.endsWith("big.bin"));
    expect(bigReports.map((report) => report.bytesCopied)).toEqual([
      4 * 1024 * 1024,
      8 * 1024 * 1024,
      big.length,
    ]);
    expect(reports.at(-1)).toEqual({
      containerPath: "/workspace/data/small.csv",
      bytesCopied: 8,
      totalBytes: 8,
    });
    await manager.close();
  });

  test("on a local engine are bind-mounted read-only at the start: no copy, the same bytes", async () => {
    folder ||= await mkdtemp(join(tmpdir(), "codeaction-prelaunch-files-"));
    const data = randomBytes(5 * 1024 * 1024);
    await writeFile(join(folder, "mounted.bin"), data);
    const prelaunch = SandboxPrelaunch.start({ network: "none" }, { files: [join(folder, "mounted.bin")] });
    const reports: PlacingProgress[] = [];
    prelaunch.onPlacing((progress) => reports.push(progress));
    const manager = new SandboxManager({ network: "none", pool: 0 }, { prelaunch });
    managers.push(manager);
    const session = await manager.createSession();
    expect(await session.filesPlaced()).toEqual([
      { containerPath: "/workspace/data/mounted.bin", bytes: data.length, how: "mounted" },
    ]);
    // The turn's placement copies nothing more.
    expect(await session.placeFiles([join(folder, "mounted.bin")])).toEqual([
      { containerPath: "/workspace/data/mounted.bin", bytes: data.length, how: "mounted" },
    ]);
    expect(reports).toEqual([]);
    const { stdout } = await session.execute("sha256sum /workspace/data/mounted.bin");
    expect(stdout).toContain(createHash("sha256").update(data).digest("hex"));
    const info = await docker.getContainer(session.containerId).inspect();
    expect(info.Mounts.map((mount) => [mount.Source, mount.Destination, mount.RW])).toEqual([
      [join(folder, "mounted.bin"), "/workspace/data/mounted.bin", false],
    ]);
    await manager.close();
  });

  test("mounted past poolCopyLimit: the session still gets the prelaunched container, its one create", async () => {
    folder ||= await mkdtemp(join(tmpdir(), "codeaction-prelaunch-files-"));
    const big = join(folder, "over-limit.bin");
    await writeFile(big, randomBytes(2 * 1024 * 1024));
    const since = Math.floor(Date.now() / 1000) - 1;
    const prelaunch = SandboxPrelaunch.start({ network: "none" }, { files: [big] });
    const manager = new SandboxManager({ network: "none", pool: 0, poolCopyLimit: "1M" }, { prelaunch });
    managers.push(manager);
    const session = await manager.createSession({ mountFiles: [big] });
    expect(await session.placeFiles([big])).toEqual([
      { containerPath: "/workspace/data/over-limit.bin", bytes: 2 * 1024 * 1024, how: "mounted" },
    ]);
    await manager.close();
    expect(created(await eventsOf(manager.managerId, since))).toEqual([session.containerId]);
  });

  test("that do not fit are left to the turn: the session gets the container, none placed, the failure says why", async () => {
    folder ||= await mkdtemp(join(tmpdir(), "codeaction-prelaunch-files-"));
    await writeFile(join(folder, "three-target.bin"), randomBytes(3 * 1024 * 1024));
    // Through a link, so copied (a mounted file takes no room in /workspace).
    await symlink(join(folder, "three-target.bin"), join(folder, "three.bin"));
    const prelaunch = SandboxPrelaunch.start(
      { network: "none", diskLimit: "2m" },
      { files: [join(folder, "three.bin")] },
    );
    const manager = new SandboxManager({ network: "none", pool: 0, diskLimit: "2m" }, { prelaunch });
    managers.push(manager);
    const session = await manager.createSession();
    expect(await session.filesPlaced()).toEqual([]);
    expect(prelaunch.failure).toMatch(/No space left on device/);
    await manager.close();
    expect(await containersOf(prelaunch.managerId)).toEqual([]);
  });
});

describe("a prelaunched container's owner process", () => {
  /** Runs the fixture; resolves with its first output line and the child. */
  async function startOwner(mode: "hold" | "finish" | "take" | "overlap") {
    const child = spawn(process.execPath, [ownerScript, mode], { stdio: ["ignore", "pipe", "inherit"] });
    // Listened for from the start: the child may exit before its first line is read here.
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    while (!output.includes("\n")) {
      if (child.exitCode !== null) throw new Error(`the owner process failed: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const first = JSON.parse(output.split("\n")[0] ?? "") as {
      containerId: string;
      stdout?: string;
      managerId?: string;
      closed?: boolean;
    };
    if (first.containerId) leftovers.push(first.containerId);
    return { child, exited, ...first };
  }

  test("waiting twice at once (engine checks, then close): the first answer does not let the process exit before the second", async () => {
    const { exited, managerId, closed } = await startOwner("overlap");
    expect(closed).toBe(true);
    expect((await exited)[0]).toBe(0);
    expect(await containersOf(managerId!)).toEqual([]);
  });

  test("ends by itself after closing its manager: the worker never keeps it alive", async () => {
    const { exited, containerId, stdout } = await startOwner("finish");
    expect(stdout).toBe("taken over\n");
    const [exitCode] = await exited;
    expect(exitCode).toBe(0);
    await expect(docker.getContainer(containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  test("waiting for the container with nothing else alive: the worker keeps the process up until it answers", async () => {
    // An unreferenced worker would let the process exit (code 13, unsettled await) before the
    // container is started.
    const { exited, containerId } = await startOwner("take");
    expect(containerId).toMatch(/^[0-9a-f]{64}$/);
    const [exitCode] = await exited;
    expect(exitCode).toBe(0);
  });

  test("SIGKILLed: the worker's lifeline ends with it and the container stops long before its deadline", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const { child, exited, containerId } = await startOwner("hold");
    expect((await docker.getContainer(containerId).inspect()).State.Running).toBe(true);
    child.kill("SIGKILL");
    await exited;
    // The deadline is an hour away: only the lifeline can stop it within this test's time. Its owner
    // is dead, so another test file's sweep may remove it once it stopped (gone counts as stopped);
    // while it still runs, a sweep first gives it 3 s to end by itself (sweep.ts ownerGoneGraceMs,
    // proven in sweep.test.ts: a sweep here cannot be timed into the moment after the owner died).
    const running = async () =>
      docker
        .getContainer(containerId)
        .inspect()
        .then((info) => info.State.Running === true)
        .catch((error: { statusCode?: number }) =>
          error.statusCode === 404 ? false : Promise.reject(error),
        );
    while (await running()) await new Promise((resolve) => setTimeout(resolve, 250));
    // It died with no kill from outside before it: its own PID 1 ended it when the lifeline closed.
    // A sweep (or anyone else) stopping it would show the engine's "kill" first.
    const actions = await containerActions(docker, since, { container: [containerId] });
    expect(actions).toContain("die");
    expect(actions.slice(0, actions.indexOf("die"))).not.toContain("kill");
  });
});
