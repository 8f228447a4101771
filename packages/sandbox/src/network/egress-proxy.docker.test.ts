import { spawn } from "node:child_process";
import { PassThrough, Writable } from "node:stream";
import Dockerode from "dockerode";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FixtureServer, startFixtureServer } from "../../test/egress-fixture.ts";
import { removeContainer, statusCodeOf } from "../engine/engine-operations.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { DEFAULT_IMAGE } from "../images/names.ts";
import { EgressProxy } from "./egress-proxy.ts";
import { resolveNetworkPolicy } from "./network-policy.ts";
import { proxyImage } from "./proxy-image.ts";
import {
  findSessionNetworkProblems,
  type SessionNetwork,
  sessionNetworkSettings,
} from "./session-network.ts";

// Everything here talks only to the project's own containers: a fixture server on Docker's default
// bridge (reached through pinned names), the proxy, and two sandboxes. Names under .invalid and the
// documentation address 192.0.2.1 stand for "outside"; refused requests never leave the proxy.

const docker = new Dockerode();
const testRun = `codeaction-egress-test-${process.pid}`;
const created: Dockerode.Container[] = [];

/** Runs argv in a container; returns exit code and output. */
async function run(
  container: Dockerode.Container,
  argv: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const exec = await container.exec({ Cmd: argv, AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  stdout.on("data", (chunk: Buffer) => chunks.stdout.push(chunk));
  stderr.on("data", (chunk: Buffer) => chunks.stderr.push(chunk));
  docker.modem.demuxStream(stream, stdout, stderr);
  await new Promise((resolve) => stream.on("end", resolve));
  const info = await exec.inspect();
  return {
    exitCode: info.ExitCode ?? -1,
    stdout: Buffer.concat(chunks.stdout).toString(),
    stderr: Buffer.concat(chunks.stderr).toString(),
  };
}

async function python(container: Dockerode.Container, source: string) {
  return run(container, ["python3", "-c", source]);
}

/** A sandbox-like container (hardened as the sandbox is) on a session network. */
async function startSandbox(network: SessionNetwork): Promise<Dockerode.Container> {
  const settings = sessionNetworkSettings(network);
  const container = await docker.createContainer({
    Image: DEFAULT_IMAGE,
    name: `${testRun}-sandbox-${network.sessionId}`,
    User: "65534:65534",
    Entrypoint: ["timeout", "-s", "KILL", "600", "sleep", "600"],
    Cmd: [],
    Env: [
      "HOME=/workspace",
      "PYTHONPATH=/workspace/.packages",
      ...Object.entries(settings.environment).map(([key, value]) => `${key}=${value}`),
    ],
    Hostname: "sandbox",
    Labels: { "codeaction.test": testRun },
    NetworkingConfig: settings.networkingConfig,
    HostConfig: {
      NetworkMode: settings.networkMode,
      DnsOptions: settings.dnsOptions,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      PidsLimit: 128,
      Memory: 512 * 1024 ** 2,
      Init: true,
      Tmpfs: {
        "/workspace": "rw,nosuid,nodev,size=64m,uid=65534,gid=65534,mode=0700",
        "/tmp": "rw,noexec,nosuid,size=16m",
      },
    },
  });
  created.push(container);
  await container.start();
  expect(findSessionNetworkProblems(await container.inspect(), network)).toEqual([]);
  return container;
}

const fetchSource = (url: string) => `
import sys, urllib.request, urllib.error
try:
  print(urllib.request.urlopen("${url}", timeout=20).read().decode().strip())
except urllib.error.HTTPError as error:
  print("HTTP", error.code); sys.exit(3)
`;

/** An HTTPS-style CONNECT through the proxy; prints the proxy's answer to the tunnel request. */
const connectSource = (host: string) => `
import http.client, os, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTPS_PROXY"])
connection = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=20)
connection.set_tunnel("${host}", 443)
try:
  connection.connect(); print("tunnel open")
except OSError as error:
  print("refused:", error)
`;

/** Tries a direct TCP connection, bypassing the proxy; prints "connected" or the error. */
const directSource = (host: string, port: number) => `
import socket
try:
  socket.create_connection(("${host}", ${port}), timeout=3); print("connected")
except OSError as error:
  print("failed:", type(error).__name__, error)
`;

describe("egress proxy", () => {
  let proxy: EgressProxy;
  let server: FixtureServer;
  const networks: SessionNetwork[] = [];
  let sandboxA: Dockerode.Container;
  let sandboxB: Dockerode.Container;
  const logLines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = await startFixtureServer(docker, { name: `${testRun}-server` });
    const logger = pino(
      { level: "info" },
      new Writable({
        write(chunk, _encoding, callback) {
          for (const line of chunk.toString().split("\n").filter(Boolean)) logLines.push(JSON.parse(line));
          callback();
        },
      }),
    );
    proxy = await EgressProxy.start({
      docker,
      managerId: `test-${process.pid}`,
      logger,
      policy: resolveNetworkPolicy({
        allow: ["loopback.test.invalid", "private.test.invalid"],
        hosts: { "files.test.invalid": server.address, "pypi.test.invalid": server.address },
      })!,
      // Allowed but not pinned: squid resolves them to loopback and to a private address (the fixture
      // server's own, so a broken denial would show as an answer instead of reaching anything else).
      unpinnedResolutions: { "loopback.test.invalid": "127.0.0.1", "private.test.invalid": server.address },
    });
    for (const sessionId of ["session-a", "session-b"]) {
      networks.push(
        await proxy.attachSession({ sessionId, logger: logger.child({ runId: `run-${sessionId}` }) }),
      );
    }
    sandboxA = await startSandbox(networks[0]!);
    sandboxB = await startSandbox(networks[1]!);
  });

  afterAll(async () => {
    await Promise.allSettled(created.map((container) => removeContainer(container)));
    await server?.remove();
    await proxy?.close();
    const left = await docker.listNetworks({
      filters: { label: [`codeaction.manager-id=test-${process.pid}`] },
    });
    expect(left.map((network) => network.Name)).toEqual([]);
  });

  it("runs squid hardened: unprivileged, no capabilities, no new privileges, read-only root", async () => {
    const proxyContainer = docker.getContainer(proxy.containerId);
    const status = await run(proxyContainer, [
      "sh",
      "-c",
      'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = squid ] && grep -E "^(Uid|CapEff|NoNewPrivs)" $p/status; done; touch /etc/x 2>&1 || true',
    ]);
    expect(status.stdout).toMatch(/^Uid:\s+13\s+13\s+13\s+13$/m);
    expect(status.stdout).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(status.stdout).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status.stdout).toMatch(/Read-only file system/);
  });

  it("lets an allowed (pinned) name answer, through the proxy only", async () => {
    const result = await python(sandboxA, fetchSource("http://files.test.invalid/hello.txt"));
    expect(result.stdout.trim()).toBe("hello from the fixture");
  });

  it("refuses a name that is not on the list, for plain HTTP and for CONNECT", async () => {
    expect((await python(sandboxA, fetchSource("http://example.invalid/"))).stdout.trim()).toBe("HTTP 403");
    expect((await python(sandboxA, connectSource("example.invalid"))).stdout).toMatch(/refused:.*403/);
  });

  it("refuses an allowed name that resolves to a loopback or private address", async () => {
    expect(
      (await python(sandboxA, fetchSource("http://loopback.test.invalid/hello.txt"))).stdout.trim(),
    ).toBe("HTTP 403");
    expect((await python(sandboxA, fetchSource("http://private.test.invalid/hello.txt"))).stdout.trim()).toBe(
      "HTTP 403",
    );
  });

  it("refuses raw IP literals that are not listed", async () => {
    expect((await python(sandboxA, fetchSource("http://192.0.2.1/"))).stdout.trim()).toBe("HTTP 403");
    expect((await python(sandboxA, fetchSource(`http://${server.address}/hello.txt`))).stdout.trim()).toBe(
      "HTTP 403",
    );
    expect((await python(sandboxA, connectSource("[2001:db8::1]"))).stdout).toMatch(/refused:.*403/);
  });

  it("gives the sandbox no DNS and no path but the proxy", async () => {
    const names = await python(
      sandboxA,
      `
import socket
for name in ["example.invalid", "files.test.invalid", "pypi.org"]:
  try:
    socket.getaddrinfo(name, 80); print(name, "resolved")
  except OSError as error:
    print(name, "failed")
`,
    );
    expect(names.stdout.trim().split("\n")).toEqual([
      "example.invalid failed",
      "files.test.invalid failed",
      "pypi.org failed",
    ]);
    const [networkA, networkB] = networks as [SessionNetwork, SessionNetwork];
    // The proxy answers on the sandbox's own network...
    expect((await python(sandboxA, directSource(networkA.proxyAddress, 3128))).stdout).toMatch(/^connected/);
    // ...but the proxy's other networks (the egress bridge and the fixture on it) are out of reach,
    const proxyInfo = await docker.getContainer(proxy.containerId).inspect();
    const proxyEgressAddress = proxyInfo.NetworkSettings.Networks.bridge?.IPAddress ?? "";
    expect(proxyEgressAddress).not.toBe("");
    expect((await python(sandboxA, directSource(proxyEgressAddress, 3128))).stdout).toMatch(/^failed/);
    expect((await python(sandboxA, directSource(server.address, 80))).stdout).toMatch(/^failed/);
    // ...and so is the proxy's address on the other session's network.
    expect((await python(sandboxA, directSource(networkB.proxyAddress, 3128))).stdout).toMatch(/^failed/);
  });

  it("keeps one sandbox from reaching another", async () => {
    const [, networkB] = networks as [SessionNetwork, SessionNetwork];
    await run(sandboxB, [
      "sh",
      "-c",
      "cd /workspace && (python3 -m http.server 8080 >/dev/null 2>&1 &) ; sleep 1",
    ]);
    // The listener is there (seen from B itself)...
    expect((await python(sandboxB, directSource(networkB.sandboxAddress, 8080))).stdout).toMatch(
      /^connected/,
    );
    // ...but A reaches it neither directly nor through the proxy.
    expect((await python(sandboxA, directSource(networkB.sandboxAddress, 8080))).stdout).toMatch(/^failed/);
    expect(
      (await python(sandboxA, fetchSource(`http://${networkB.sandboxAddress}:8080/`))).stdout.trim(),
    ).toBe("HTTP 403");
  });

  it("installs a package with pip from the test index through the proxy", async () => {
    let pip = ["python3", "-m", "pip"];
    const hasPip = (await run(sandboxA, ["python3", "-m", "pip", "--version"])).exitCode === 0;
    if (!hasPip) {
      if (!server.pipWheel)
        throw new Error(
          "the sandbox image has no pip and the host has no pip wheel in /usr/share/python-wheels",
        );
      // Fetch pip's own wheel through the proxy and run pip from it.
      const fetched = await python(
        sandboxA,
        `import urllib.request; urllib.request.urlretrieve("http://files.test.invalid/${server.pipWheel}", "/workspace/${server.pipWheel}")`,
      );
      expect(fetched.stderr).toBe("");
      pip = ["python3", `/workspace/${server.pipWheel}/pip`];
    }
    const install = await run(sandboxA, [
      ...pip,
      "install",
      "--no-input",
      "--no-cache-dir",
      "--disable-pip-version-check",
      "--index-url",
      "http://pypi.test.invalid/simple",
      "--trusted-host",
      "pypi.test.invalid",
      "--target",
      "/workspace/.packages",
      "codeaction-probe",
    ]);
    expect(install.stdout + install.stderr).toMatch(/Successfully installed codeaction-probe-1\.0/);
    const imported = await python(sandboxA, "import codeaction_probe; print(codeaction_probe.ANSWER)");
    expect(imported.stdout.trim()).toBe("42");
  });

  it("logs every allowed and refused request with the session's logger (run id) and client", async () => {
    const allowed = logLines.find(
      (line) => line.msg === "egress request allowed" && line.host === "files.test.invalid",
    );
    const refused = logLines.find(
      (line) => line.msg === "egress request refused" && line.host === "example.invalid",
    );
    expect(allowed).toMatchObject({
      runId: "run-session-a",
      sessionId: "session-a",
      decision: "allowed",
      status: 200,
    });
    expect(refused).toMatchObject({
      runId: "run-session-a",
      sessionId: "session-a",
      decision: "refused",
      status: 403,
    });
    expect(
      logLines.some((entry) => entry.host === "private.test.invalid" && entry.decision === "refused"),
    ).toBe(true);
    expect(logLines.some((entry) => entry.host === "192.0.2.1" && entry.decision === "refused")).toBe(true);
  });
});

describe("egress proxy lifetime", () => {
  it("ends by itself when the process that started it is killed", async () => {
    const script = [
      'import Dockerode from "dockerode";',
      `import { EgressProxy } from ${JSON.stringify(new URL("./egress-proxy.ts", import.meta.url).pathname)};`,
      `import { resolveNetworkPolicy } from ${JSON.stringify(new URL("./network-policy.ts", import.meta.url).pathname)};`,
      `const proxy = await EgressProxy.start({ docker: new Dockerode(), managerId: "lifetime-${process.pid}", policy: resolveNetworkPolicy("restricted") });`,
      "process.stdout.write(proxy.containerId + '\\n');",
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: new URL("..", import.meta.url).pathname,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const containerId = await new Promise<string>((resolve, reject) => {
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("\n")) resolve(output.trim());
      });
      child.on("exit", (code) => reject(new Error(`the child exited (${code}) before starting the proxy`)));
    });
    const container = docker.getContainer(containerId);
    try {
      expect((await container.inspect()).State.Running).toBe(true);
      child.kill("SIGKILL");
      // Generous upper bound: it must end by itself, not at its 24-hour deadline. Once ended, its
      // owner being dead, another process's sweep may remove it first: gone counts as ended.
      const stillRunning = () =>
        container.inspect().then(
          (state) => state.State.Running,
          (error: unknown) => {
            if (statusCodeOf(error) === 404) return false;
            throw error;
          },
        );
      let running = true;
      for (let attempt = 0; attempt < 60 && running; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        running = await stillRunning();
      }
      expect(running).toBe(false);
    } finally {
      child.kill("SIGKILL");
      await removeContainer(container);
    }
  });
});

describe("egress proxy set-up failures", () => {
  it("refuses to start without its image, naming the image and how to build it, leaving nothing", async () => {
    const managerId = `test-missing-${process.pid}`;
    const error = await EgressProxy.start({
      docker,
      managerId,
      image: "codeaction/proxy:does-not-exist",
      policy: resolveNetworkPolicy("restricted")!,
    }).catch((caught: unknown) => caught);
    expect(NetworkSetupError.isInstance(error)).toBe(true);
    expect((error as NetworkSetupError).code).toBe("network-setup");
    expect((error as Error).message).toMatch(
      /codeaction\/proxy:does-not-exist" is not present.*scripts\/build-images\.ts/,
    );
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`codeaction.manager-id=${managerId}`] },
    });
    expect(left).toEqual([]);
  });

  it("refuses to start when the egress network does not exist", async () => {
    const error = await EgressProxy.start({
      docker,
      managerId: `test-egress-${process.pid}`,
      image: proxyImage,
      egressNetwork: "codeaction-no-such-network",
      policy: resolveNetworkPolicy("restricted")!,
    }).catch((caught: unknown) => caught);
    expect(NetworkSetupError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/egress network "codeaction-no-such-network" does not exist/);
  });
});
