import Dockerode from "dockerode";
import { afterAll, describe, expect, it } from "vitest";
import { readAll } from "../test/read-all.ts";
import { SandboxManager } from "./manager.ts";

// The cold path (pool 0) with a warm command, as code-action's manager has one (its bridge relay):
// the command starts with the container, alongside the read-back after start, so the first program
// needs no exec of its own. Proved from the engine's own events, on runc and gVisor.
const docker = new Dockerode({ socketPath: "/var/run/docker.sock" });
const token = "cold-warm-test-command";
// Runs what it is given on stdin (a stand-in for the relay, which waits for its program the same way).
const warmCommand = ["python3", "-I", "-c", "import sys; exec(sys.stdin.read())", token];

/** How many execs of the warm command the engine created in `containerId` since `since` (seconds). */
async function warmExecsIn(containerId: string, since: number): Promise<number> {
  const stream = await docker.getEvents({
    since,
    until: Math.floor(Date.now() / 1000) + 1,
    filters: { type: ["container"], container: [containerId], event: ["exec_create"] },
  });
  const actions = (await readAll(stream))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { Action: string }).Action);
  return actions.filter((action) => action.includes(token)).length;
}

describe.each(["docker", "gvisor"] as const)("a cold session's warm command (backend %s)", (backend) => {
  const managers: SandboxManager[] = [];
  afterAll(async () => {
    await Promise.allSettled(managers.map((manager) => manager.close()));
  });

  it("runs before the session is handed out; the first program runs in it with no exec of its own", async () => {
    const manager = new SandboxManager({ backend, pool: 0 }, { warmCommand });
    managers.push(manager);
    await manager.ready();
    const since = Math.floor(Date.now() / 1000) - 1;
    const session = await manager.createSession();
    expect(await warmExecsIn(session.containerId, since)).toBe(1);
    const handle = session.takeWarm();
    expect(handle?.argv).toEqual(warmCommand);
    const process = handle!.claim();
    process.stderr.resume();
    process.stdin.end('import os; print("ran as", os.getuid(), "in", os.getcwd())\n');
    const output = await readAll(process.stdout);
    expect(await process.exit).toEqual({ exitCode: 0 });
    expect(output).toBe(`ran as ${session.config.user?.split(":")[0]} in /workspace\n`);
    expect(await warmExecsIn(session.containerId, since)).toBe(1);
    await session.close();
  });

  it("killed, the claimed process and what it started end (the kill helper's marker kill)", async () => {
    const manager = new SandboxManager({ backend, pool: 0 }, { warmCommand });
    managers.push(manager);
    const session = await manager.createSession();
    const process = session.takeWarm()!.claim();
    process.stderr.resume();
    process.stdin.write(
      'import subprocess, sys, time\nsubprocess.Popen(["sleep", "987"])\nprint("started", flush=True)\ntime.sleep(600)\n',
    );
    process.stdin.end();
    await new Promise<void>((resolve) => process.stdout.once("data", () => resolve()));
    process.stdout.resume();
    await process.kill();
    expect((await process.exit).exitCode).not.toBe(0);
    const left = await session.execute(
      "python3 -c \"import os; print([p for p in os.listdir('/proc') if p.isdigit() and b'sleep\\x00987' in open('/proc/%s/cmdline' % p, 'rb').read()])\"",
    );
    expect(left).toMatchObject({ exitCode: 0, stdout: "[]\n" });
    await session.close();
  });
});
