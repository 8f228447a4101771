import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll } from "../../test/read-all.ts";
import { connectDocker } from "../connection/connect-docker.ts";
import { SandboxManager } from "../manager.ts";

// createSession({ command }) against the real engine: the command's exec is the container's first,
// ahead of the kill helper's, and session.takeWarm() hands out that process (warm-process.ts).

/** Upper-cases its stdin; says whether it carries a kill marker. */
const upper = [
  "python3",
  "-c",
  "import os, sys; print(sys.stdin.read().upper(), 'CODEACTION_EXEC_ID' in os.environ)",
];

/** The engine's exec actions for one container since `since`, in order ("exec_create: python3 -c ..."). */
async function execCreates(docker: Dockerode, since: number, containerId: string): Promise<string[]> {
  const stream = await docker.getEvents({
    since,
    until: Math.floor(Date.now() / 1000) + 1,
    filters: { type: ["container"], container: [containerId], event: ["exec_create"] },
  });
  return (await readAll(stream))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => (JSON.parse(line) as { Action: string }).Action);
}

/** How many processes of the container have the mark in their command line (this check's own has it in two parts). */
const markedProcesses =
  "python3 -c \"import os; n = b'first-command' + b'-mark'; print(sum(1 for p in os.listdir('/proc') if p.isdigit() and n in open('/proc/' + p + '/cmdline', 'rb').read()))\"";

describe.each(["docker", "gvisor"] as const)("a cold session's first command (backend %s)", (backend) => {
  let manager: SandboxManager;
  let docker: Dockerode;

  beforeAll(async () => {
    manager = new SandboxManager({ backend, network: "none", pool: 0 });
    await manager.ready();
    ({ docker } = (await connectDocker()) as unknown as { docker: Dockerode });
  });

  afterAll(async () => {
    await manager?.close();
  });

  it("is the container's first exec, before the kill helper's, and takeWarm() hands out that process", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const session = await manager.createSession({ command: [...upper] });
    const process = session.takeWarm()!.claim();
    process.stdin.end("hello from the host");
    const [stdout] = await Promise.all([readAll(process.stdout), readAll(process.stderr)]);
    expect(stdout).toBe("HELLO FROM THE HOST True\n");
    expect((await process.exit).exitCode).toBe(0);
    const creates = await execCreates(docker, since, session.containerId);
    // Under gVisor each exec's argv comes after the seccomp guard's (syscall-guard.ts).
    expect(creates[0]?.endsWith(` ${upper.join(" ")}`)).toBe(true);
    expect(creates[1]).toMatch(/ python3 -I -S -c .*codeaction-kill-helper$/s);
    expect(creates).toHaveLength(2);
    await session.close();
  });

  it("closed unused, it ends; claimed, its kill() ends it", async () => {
    const waiting = ["python3", "-c", "import sys; sys.stdin.read()  # first-command-mark"];
    const session = await manager.createSession({ command: [...waiting] });
    expect((await session.execute(markedProcesses)).stdout.trim()).toBe("1");
    // A spawn of another command leaves it waiting; closing its handle ends it (end of file).
    const other = session.spawn(["python3", "-c", "print('other')"]);
    other.stdin.end();
    expect((await Promise.all([readAll(other.stdout), readAll(other.stderr)]))[0]).toBe("other\n");
    expect((await session.execute(markedProcesses)).stdout.trim()).toBe("1");
    session.takeWarm()?.close();
    await expect
      .poll(async () => (await session.execute(markedProcesses)).stdout.trim(), { timeout: 10_000 })
      .toBe("0");
    await session.close();

    const sleeping = [
      "python3",
      "-c",
      "import sys, time; sys.stdin.read(); time.sleep(600)  # first-command-mark",
    ];
    const second = await manager.createSession({ command: [...sleeping] });
    const taken = second.takeWarm()!.claim();
    taken.stdin.end();
    taken.stdout.resume();
    taken.stderr.resume();
    await taken.started;
    expect((await second.execute(markedProcesses)).stdout.trim()).toBe("1");
    await taken.kill();
    await expect
      .poll(async () => (await second.execute(markedProcesses)).stdout.trim(), { timeout: 10_000 })
      .toBe("0");
    // Not `await taken.exit`: gVisor held a killed exec's stream open for most of a minute (2 runs in
    // 52 under load; session.ts closes such connections with the container), and one run under runc
    // waited past the test's limit at a step not known. The process being gone is what kill() owes.
    await second.close();
  });
});
