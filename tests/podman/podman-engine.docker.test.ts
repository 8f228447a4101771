import { readFileSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { connectDocker, engineInfo, SandboxError, SandboxManager } from "@codeaction/sandbox";
import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runCli } from "../../packages/cli/test/run-cli.ts";
import { labelKeys } from "../../packages/sandbox/src/container/labels.ts";
import { echoTool, resultJson, runAgentCase, runCase } from "../support/harness.ts";
import {
  loadImageFromDocker,
  type PodmanService,
  rootlessUser,
  startPodmanService,
} from "./podman-service.ts";

// The sandbox on Podman's Docker-compatible API: `podman system service` on the test's own socket,
// the sandbox image loaded from Docker into Podman's store. Rootful runs the acceptance cases, a
// code-action turn and doctor; rootless is refused where Podman cannot enforce the limits.

const image = "codeaction/python:3.11";

/** Containers on the Podman engine that carry `label=value` (any state). */
async function podmanContainers(service: PodmanService, label: string, value: string): Promise<string[]> {
  const { docker } = await connectDocker({ engine: { host: service.host } });
  const list = await docker.listContainers({ all: true, filters: { label: [`${label}=${value}`] } });
  return list.map((container) => container.Id);
}

/**
 * Podman's container events since `since` (seconds), as its Docker-compatible API reports them.
 * `stream: false` (Podman's own query parameter) ends the answer at the end of the event log. Not
 * `until`: Podman 4 stops reading its log when `until` comes, read or not, so an `until` a second
 * ahead lost the turn's events on a loaded machine (the whole log is read from the start).
 */
async function podmanEvents(
  service: PodmanService,
  since: number,
): Promise<{ action: string; labels: Record<string, string> }[]> {
  const { docker } = await connectDocker({ engine: { host: service.host } });
  const query: Dockerode.GetEventsOptions & { stream: boolean } = {
    since,
    stream: false,
    filters: { type: ["container"] },
  };
  const stream = await docker.getEvents(query);
  let text = "";
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString();
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { Action: string; Actor?: { Attributes?: Record<string, string> } })
    .map((event) => ({ action: event.Action, labels: event.Actor?.Attributes ?? {} }));
}

/** What the program reports from inside: privileges, seccomp, user, filesystem, network, limits, masks. */
const acceptanceProgram = [
  "import ctypes, json, os, socket",
  "status = dict(line.split(':\\t') for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)",
  "def read(*paths):",
  "    for path in paths:",
  "        if os.path.exists(path): return open(path).read().strip()",
  "    return 'missing'",
  "def writable(path):",
  "    try:",
  "        with open(path, 'w') as handle: handle.write('x')",
  "        return True",
  "    except OSError: return False",
  "def connects():",
  "    try:",
  "        socket.create_connection(('192.0.2.1', 80), timeout=3).close()",
  "        return True",
  "    except OSError: return False",
  "libc = ctypes.CDLL(None, use_errno=True)",
  // io_uring_setup(1, NULL): our profile answers ENOSYS (38); without it the kernel says EFAULT.
  "libc.syscall(425, 1, None)",
  "interfaces = [line.split(':')[0].strip() for line in open('/proc/net/dev').read().splitlines()[2:]]",
  "echoed = [echo(value=index)['echoed'] for index in range(20)]",
  "print('RESULT: ' + json.dumps({",
  "  'cap': status['CapEff'].strip(), 'bounding': status['CapBnd'].strip(), 'nnp': status['NoNewPrivs'].strip(),",
  "  'seccomp': status['Seccomp'].strip(), 'ioUringErrno': ctypes.get_errno(), 'uid': os.getuid(),",
  "  'rootWritable': writable('/probe'), 'workspaceWritable': writable('/workspace/probe'),",
  "  'interfaces': interfaces, 'connects': connects(),",
  "  'memory': read('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'),",
  "  'pids': read('/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/pids/pids.max'),",
  "  'cmdline': read('/proc/cmdline'), 'echoed': echoed}))",
].join("\n");

// The cases run at the same time (each on its own containers): the file's time is its slowest case.
describe.concurrent("Podman", () => {
  let service: PodmanService;
  let rootless: PodmanService;
  let manager: SandboxManager;

  beforeAll(async () => {
    [service, rootless] = await Promise.all([
      startPodmanService(),
      startPodmanService({ user: rootlessUser }),
    ]);
    loadImageFromDocker(service, image);
    manager = new SandboxManager({
      network: "none",
      memoryLimit: "256m",
      pidsLimit: 64,
      engine: { host: service.host },
    });
    await manager.ready();
  }, 600_000);

  afterAll(async () => {
    await manager?.close();
    await Promise.all([service?.stop(), rootless?.stop()]);
  }, 120_000);

  test("a run: every flag holds inside, files go both ways, 20 tool calls cross the bridge", async () => {
    const { tool, calls } = echoTool();
    let sessionUid = 0;
    const run = await runCase(manager, {
      tools: [tool],
      program: acceptanceProgram,
      after: async (session) => {
        sessionUid = Number(session.config.user?.split(":")[0]);
        await session.writeFile("/workspace/back.txt", "round trip");
        expect((await session.readFile("/workspace/back.txt")).content.toString()).toBe("round trip");
      },
    });
    expect(readFileSync("/proc/cmdline", "utf8").trim()).not.toBe("");
    expect(resultJson(run)).toEqual({
      cap: "0000000000000000",
      bounding: "0000000000000000",
      nnp: "1",
      seccomp: "2",
      ioUringErrno: 38,
      uid: sessionUid,
      rootWritable: false,
      workspaceWritable: true,
      interfaces: ["lo"],
      connects: false,
      memory: String(256 * 1024 ** 2),
      pids: "64",
      cmdline: "",
      echoed: Array.from({ length: 20 }, (_value, index) => index),
    });
    expect(calls).toHaveLength(20);
    // runCase's own checks look at Docker: on Podman the container must be gone too.
    expect(await podmanContainers(service, labelKeys.managerId, manager.managerId)).toEqual([]);
  }, 300_000);

  test("a code-action turn runs on Podman and leaves nothing there", async () => {
    // This process's containers on Podman that the acceptance case's manager did not make: the turn's.
    const since = Math.floor(Date.now() / 1000) - 1;
    const turns = (labels: Record<string, string>) =>
      labels[labelKeys.ownerPid] === String(process.pid) && labels[labelKeys.managerId] !== manager.managerId;
    const outcome = await runAgentCase({
      backend: "docker",
      programs: ["print('RESULT: ' + str(sum(range(10))))"],
      sandbox: { engine: { host: service.host } },
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.result?.answer).toContain("45");
    // Podman made the turn's container (its own events say so) ...
    const events = await podmanEvents(service, since);
    expect(events.filter((event) => event.action === "create" && turns(event.labels))).not.toEqual([]);
    // ... and none is left there (runAgentCase's own leftover check looks at Docker).
    const { docker } = await connectDocker({ engine: { host: service.host } });
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] },
    });
    expect(left.filter((container) => turns(container.Labels ?? {}))).toEqual([]);
  }, 300_000);

  test("codeaction doctor recognises Podman and proves the limits and privileges", async () => {
    const doctor = await runCli(["doctor"], { env: { DOCKER_HOST: service.host }, timeoutMs: 300_000 });
    const version = (await engineInfo((await connectDocker({ engine: { host: service.host } })).docker))
      .podmanVersion;
    expect(version).toMatch(/^\d+\.\d+/);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^ok\\s+Docker endpoint\\s+${service.host} \\(Podman ${version}\\), because DOCKER_HOST is set`,
        "m",
      ),
    );
    expect(doctor.stdout).toMatch(
      new RegExp(`^ok\\s+Engine\\s+Podman ${version} \\(Docker-compatible API`, "m"),
    );
    for (const check of ["Sandbox", "Memory limit", "Pids limit", "Privileges"]) {
      expect(doctor.stdout).toMatch(new RegExp(`^ok\\s+${check}\\s`, "m"));
    }
    expect(doctor.exitCode, doctor.stdout).toBe(0);
  }, 300_000);

  test("Podman reached over the network is refused: it would open the seccomp profile on its own machine", async () => {
    // A loopback TCP port in front of the service's socket: the engine answers, but not as a local socket.
    const open = new Set<Socket>();
    const forwarder: Server = createServer((client) => {
      const engine = createConnection(service.socketPath);
      for (const socket of [client, engine]) {
        open.add(socket);
        socket.once("close", () => open.delete(socket));
      }
      client.pipe(engine).pipe(client);
      const close = () => {
        client.destroy();
        engine.destroy();
      };
      client.on("error", close);
      engine.on("error", close);
    });
    await new Promise<void>((resolve) => forwarder.listen(0, "127.0.0.1", resolve));
    const port = (forwarder.address() as { port: number }).port;
    const remote = new SandboxManager({ network: "none", engine: { host: `tcp://127.0.0.1:${port}` } });
    try {
      const refused = await remote.ready().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(SandboxError.isInstance(refused), String(refused)).toBe(true);
      expect((refused as SandboxError).code).toBe("engine-unsupported");
      expect((refused as Error).message).toMatch(
        /Podman .*reached over the network.*seccomp profile as a file/,
      );
    } finally {
      await remote.close();
      // Keep-alive connections would hold close() open: end them first.
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => forwarder.close(resolve));
    }
  }, 300_000);

  test("ready() refuses what rootless Podman cannot enforce here, naming the cause and the fix", async () => {
    const { docker } = await connectDocker({ engine: { host: rootless.host } });
    const info = await engineInfo(docker);
    expect(info.rootless).toBe(true);
    const refusing = new SandboxManager({ network: "none", engine: { host: rootless.host } });
    try {
      const refused = await refusing.ready().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(SandboxError.isInstance(refused), String(refused)).toBe(true);
      expect((refused as SandboxError).code).toBe("engine-unsupported");
      if (info.cgroupVersion === "1") {
        // Rootless Podman sets no cgroup limits on cgroup v1 (this machine): no memory, pids or cpu limit.
        expect((refused as Error).message).toMatch(
          /rootless on cgroup v1.*memoryLimit.*pidsLimit.*cgroup v2/,
        );
      } else {
        // cgroup v2: refused unless the controllers are delegated, and the default userRange is not mapped.
        expect((refused as Error).message).toMatch(
          /rootless (without the .* delegated|with \d+ user ids mapped)/,
        );
      }
    } finally {
      await refusing.close();
    }
  }, 300_000);
});
