import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  connectDocker,
  DockerUnavailableError,
  defaultEndpoints,
  type SandboxConfigInput,
  SandboxManager,
} from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runCli } from "../../packages/cli/test/run-cli.ts";
import { type SshFront, startSshFront, startTlsFront, type TlsFront } from "../support/engine-fronts.ts";
import { docker, echoTool, removedSoon, resultJson, runAgentCase, runCase } from "../support/harness.ts";

// The sandbox against a remote engine: the local engine behind TLS (client certificates) and behind
// sshd, both on loopback ports the test opens. Each front runs the acceptance cases and one turn.

let tls: TlsFront;
let ssh: SshFront;

beforeAll(async () => {
  [tls, ssh] = await Promise.all([startTlsFront(), startSshFront()]);
});

afterAll(() => {
  tls?.stop();
  ssh?.stop();
});

type Front = { name: string; engine: () => NonNullable<SandboxConfigInput["engine"]> };

const fronts: Front[] = [
  { name: "TLS", engine: () => ({ host: tls.host, tlsCertPath: tls.goodCertPath }) },
  {
    name: "SSH",
    engine: () => ({
      host: ssh.host,
      sshIdentityFile: ssh.identityFile,
      sshKnownHostsFile: ssh.knownHostsFile,
    }),
  },
];

async function failureOf(engine: SandboxConfigInput["engine"] | undefined): Promise<DockerUnavailableError> {
  const caught = await connectDocker(engine ? { engine } : {}).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(DockerUnavailableError.isInstance(caught), String(caught)).toBe(true);
  return caught as DockerUnavailableError;
}

/**
 * While a suite of the fronts runs, this process's own way to the local engine is a socket that does
 * not exist: a manager, an agent or an owner child that ignored its `engine` and fell back to the
 * environment would fail, so a passing case went through the front. The test's own inspections use
 * the client harness.docker() opened before.
 */
const missingLocalEngine = "unix:///nonexistent/codeaction-no-local-engine.sock";

describe.each(fronts)("the sandbox over $name", (front) => {
  let manager: SandboxManager;
  const dockerHost = process.env.DOCKER_HOST;

  beforeAll(async () => {
    await docker();
    process.env.DOCKER_HOST = missingLocalEngine;
    manager = new SandboxManager({ network: "none", engine: front.engine() });
    await manager.ready();
  });

  afterAll(async () => {
    await manager?.close();
    if (dockerHost === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = dockerHost;
  });

  test("the way around the front is closed: without an engine, the environment's missing socket fails", async () => {
    const error = await failureOf(undefined);
    expect(error.attempts.map((attempt) => attempt.endpoint)).toEqual([missingLocalEngine]);
    await expect(new SandboxManager({ network: "none" }).ready()).rejects.toMatchObject({
      code: "docker-unavailable",
    });
  });

  test("connects and says which endpoint and why", async () => {
    const connected = await connectDocker({ engine: front.engine() });
    expect(connected.endpoint).toBe(front.engine().host);
    expect(connected.reason).toBe("engine.host in the sandbox settings");
  });

  test("a run: the flags hold, files go both ways, 20 tool calls cross the bridge", async () => {
    const { tool, calls } = echoTool();
    let sessionUid = 0;
    const run = await runCase(manager, {
      tools: [tool],
      program: [
        "import json, os",
        "status = dict(line.split(':\\t') for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)",
        "echoed = [echo(value=index)['echoed'] for index in range(20)]",
        "print('RESULT: ' + json.dumps({'cap': status['CapEff'].strip(), 'nnp': status['NoNewPrivs'].strip(), 'seccomp': status['Seccomp'].strip(), 'uid': os.getuid(), 'echoed': echoed}))",
      ].join("\n"),
      after: async (session) => {
        sessionUid = Number(session.config.user?.split(":")[0]);
        await session.writeFile("/workspace/back.txt", "round trip");
        expect((await session.readFile("/workspace/back.txt")).content.toString()).toBe("round trip");
      },
    });
    const result = resultJson<{ cap: string; nnp: string; seccomp: string; uid: number; echoed: number[] }>(
      run,
    );
    expect(result).toEqual({
      cap: "0000000000000000",
      nnp: "1",
      seccomp: "2",
      // The sandbox's own uid, allocated by the manager on this side of the connection.
      uid: sessionUid,
      echoed: Array.from({ length: 20 }, (_value, index) => index),
    });
    expect(calls).toHaveLength(20);
  });

  test("a data file is copied, never mounted: the engine's paths are not this machine's", async () => {
    const folder = mkdtempSync(join(tmpdir(), "codeaction-remote-data-"));
    const path = join(folder, "sales.csv");
    // Readable by anyone: on a local engine this file would be mounted (tests/security/mounted-data-files.test.ts).
    writeFileSync(path, "region,amount\nnorth,3\n", { mode: 0o644 });
    const session = await manager.createSession({ mountFiles: [path] });
    try {
      expect(await session.placeFiles([path])).toEqual([
        { containerPath: "/workspace/data/sales.csv", bytes: 22, how: "copied" },
      ]);
      const info = await (await docker()).getContainer(session.containerId).inspect();
      expect(info.Mounts).toEqual([]);
      expect((await session.execute("cat /workspace/data/sales.csv")).stdout).toBe(
        "region,amount\nnorth,3\n",
      );
    } finally {
      await session.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test("the warm pool hands out a container made over this endpoint", async () => {
    const pooled = new SandboxManager({ network: "none", pool: 1, engine: front.engine() });
    try {
      await pooled.ready();
      await expect.poll(() => pooled.poolStatus().idle, { timeout: 60_000 }).toBe(1);
      const session = await pooled.createSession();
      try {
        const result = await session.execute("echo pooled; id -u");
        expect(result.stdout).toBe(`pooled\n${session.config.user?.split(":")[0]}\n`);
      } finally {
        await session.close();
      }
    } finally {
      await pooled.close();
    }
  });

  test("a code-action turn", async () => {
    const outcome = await runAgentCase({
      backend: "docker",
      programs: ["print('RESULT: ' + str(sum(range(10))))"],
      sandbox: { engine: front.engine() },
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.result?.answer).toContain("45");
  });

  test("a container ends when its owner dies, and at its deadline when the owner goes silent; none is left", {
    timeout: 300_000,
  }, async () => {
    const local = await docker();
    const killed = await startOwner(front.engine(), 600);
    const frozen = await startOwner(front.engine(), 15);
    try {
      killed.child.kill("SIGKILL");
      // Frozen: its connections stay open, no end of file reaches the container: only the deadline ends it.
      frozen.child.kill("SIGSTOP");
      // Every manager on this engine sweeps stopped containers and those whose owner is gone: a
      // container another one removed first has ended too (404).
      const running = (id: string) =>
        local
          .getContainer(id)
          .inspect()
          .then(
            (info) => info.State.Running,
            (error: { statusCode?: number }) => (error.statusCode === 404 ? false : Promise.reject(error)),
          );
      await expect.poll(() => running(killed.containerId), { timeout: 60_000, interval: 500 }).toBe(false);
      await expect.poll(() => running(frozen.containerId), { timeout: 90_000, interval: 1000 }).toBe(false);
      // Whichever manager removes them (this one's sweeps here, or another's first), none is left.
      // Over a remote engine the killed owner is not provably gone (another machine's pids), so its
      // stopped container is left to it for the sweep's stoppedGraceMs (60 s) before a sweep removes
      // it: sweep again until both are gone. That a sweep removes what it condemns is proven by
      // sweep.test.ts and lifecycle.docker.test.ts.
      const swept: Array<{ reason: string }> = [];
      const ids = [killed.containerId, frozen.containerId];
      await expect
        .poll(
          async () => {
            swept.push(...(await manager.sweep()));
            return (await Promise.all(ids.map((id) => removedSoon(id, 0)))).every(Boolean);
          },
          { timeout: 120_000, interval: 3000 },
        )
        .toBe(true);
      for (const { reason } of swept)
        expect(reason).toMatch(/^it is (exited|dead)$|owner process \d+ is gone|deadline/);
    } finally {
      frozen.child.kill("SIGKILL");
    }
  });
});

const ownerScript = fileURLToPath(new URL("./session-owner-child.ts", import.meta.url));

/** A child process that owns one session over `engine`; resolves once its container runs. */
async function startOwner(
  engine: object,
  deadlineSeconds: number,
): Promise<{ child: ChildProcess; containerId: string }> {
  const child = spawn(process.execPath, [ownerScript, JSON.stringify(engine), String(deadlineSeconds)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let errors = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    if (errors.length < 10_000) errors += String(chunk);
  });
  const containerId = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += String(chunk);
      const match = /CONTAINER (\w+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) =>
      reject(new Error(`the owner exited (${code}) before its container ran: ${errors}`)),
    );
  });
  return { child, containerId };
}

describe("the environment, as the docker CLI reads it", () => {
  test("codeaction doctor over DOCKER_HOST + DOCKER_TLS_VERIFY + DOCKER_CERT_PATH, and over ssh:// with an agent", async () => {
    const overTls = await runCli(["doctor"], {
      env: { DOCKER_HOST: tls.host, DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: tls.goodCertPath },
    });
    expect(overTls.stdout).toMatch(
      new RegExp(
        `^ok\\s+Docker endpoint\\s+${tls.host}, because DOCKER_HOST is set \\(TLS, server verified`,
        "m",
      ),
    );
    expect(overTls.exitCode, overTls.stdout).toBe(0);
    const agent = execFileSync("ssh-agent", ["-s"], { encoding: "utf8" });
    const socket = /SSH_AUTH_SOCK=([^;]+)/.exec(agent)?.[1] ?? "";
    const agentPid = Number(/SSH_AGENT_PID=(\d+)/.exec(agent)?.[1]);
    try {
      execFileSync("ssh-add", [ssh.identityFile], {
        env: { ...process.env, SSH_AUTH_SOCK: socket },
        stdio: "pipe",
      });
      const home = mkdtempSync(join(tmpdir(), "codeaction-home-"));
      mkdirSync(join(home, ".ssh"));
      writeFileSync(join(home, ".ssh", "known_hosts"), readFileSync(ssh.knownHostsFile));
      const overSsh = await runCli(["doctor"], {
        env: { DOCKER_HOST: ssh.host, SSH_AUTH_SOCK: socket, HOME: home, DOCKER_TLS_VERIFY: undefined },
      });
      rmSync(home, { recursive: true, force: true });
      expect(overSsh.stdout).toMatch(
        new RegExp(`^ok\\s+Docker endpoint\\s+${ssh.host}, because DOCKER_HOST is set`, "m"),
      );
      expect(overSsh.exitCode, overSsh.stdout).toBe(0);
    } finally {
      process.kill(agentPid, "SIGTERM");
    }
  });
});

describe("refusals name the endpoint and the cause", () => {
  test("TLS: a client certificate from another CA is refused", async () => {
    const error = await failureOf({ host: tls.host, tlsCertPath: tls.rogueCertPath });
    expect(error.attempts[0]?.endpoint).toBe(tls.host);
    // Under TLS 1.3 the client may only see the cut connection; the front's log says why it cut it.
    expect(error.message).toMatch(
      /certificate rejected: the engine refused this client's certificate|ECONNRESET: the connection was cut \(a TLS engine refusing the client certificate does this\)/,
    );
    // The client may see the cut before stunnel's line about it reaches this process.
    await expect.poll(() => tls.log(), { timeout: 10_000 }).toMatch(/Rejected by CERT at depth=0: CN=rogue/);
  });

  test("TLS: no client certificate names the missing file and the fix", async () => {
    const error = await failureOf({ host: tls.host, tlsCertPath: tls.caOnlyPath });
    expect(error.message).toContain(join(tls.caOnlyPath, "cert.pem"));
    expect(error.message).toContain("DOCKER_CERT_PATH");
    expect(error.message).not.toContain("no socket there");
  });

  test("TLS: the server's certificate is verified (a CA that did not sign it fails)", async () => {
    // The rogue folder's ca.pem is the right CA; swap in the rogue CA by pointing at a folder with only it.
    const folder = mkdtempSync(join(tmpdir(), "codeaction-wrong-ca-"));
    try {
      execFileSync("cp", [join(tls.rogueCertPath, "cert.pem"), join(tls.rogueCertPath, "key.pem"), folder]);
      execFileSync("sh", [
        "-c",
        `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout /dev/null -out ${folder}/ca.pem -days 1 -subj /CN=stranger 2>/dev/null`,
      ]);
      const error = await failureOf({ host: tls.host, tlsCertPath: folder });
      expect(error.message).toMatch(/not trusted/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  test("SSH: an unknown host key is refused, with the command that adds it", async () => {
    const error = await failureOf({
      host: ssh.host,
      sshIdentityFile: ssh.identityFile,
      sshKnownHostsFile: join(tmpdir(), "codeaction-no-known-hosts"),
    });
    expect(error.message).toContain("host key unknown");
    expect(error.message).toContain(`ssh-keyscan -p ${ssh.port} 127.0.0.1`);
  });

  test("SSH: a host key that differs from known_hosts is refused", async () => {
    const error = await failureOf({
      host: ssh.host,
      sshIdentityFile: ssh.identityFile,
      sshKnownHostsFile: ssh.wrongKnownHostsFile,
    });
    expect(error.message).toContain("host key changed");
  });

  test("SSH: a key the host does not accept is a refused login", async () => {
    const error = await failureOf({
      host: ssh.host,
      sshIdentityFile: ssh.strangerIdentityFile,
      sshKnownHostsFile: ssh.knownHostsFile,
    });
    expect(error.message).toContain("login refused");
  });

  test("a docker CLI context made by the docker CLI is read, current or by DOCKER_CONTEXT", async () => {
    const configFolder = mkdtempSync(join(tmpdir(), "codeaction-docker-config-"));
    try {
      const cli = (...args: string[]) =>
        execFileSync("docker", args, { env: { ...process.env, DOCKER_CONFIG: configFolder }, stdio: "pipe" });
      const certs = tls.goodCertPath;
      cli(
        "context",
        "create",
        "remote-tls",
        "--docker",
        `host=${tls.host},ca=${certs}/ca.pem,cert=${certs}/cert.pem,key=${certs}/key.pem`,
      );
      const byName = defaultEndpoints({ DOCKER_CONFIG: configFolder, DOCKER_CONTEXT: "remote-tls" });
      expect(byName[0]?.reason).toBe('context "remote-tls" (DOCKER_CONTEXT is set)');
      expect((await connectDocker({ endpoints: byName })).endpoint).toBe(tls.host);
      cli("context", "use", "remote-tls");
      const current = defaultEndpoints({ DOCKER_CONFIG: configFolder });
      expect(current[0]?.reason).toContain("the current context in");
      expect((await connectDocker({ endpoints: current })).endpoint).toBe(tls.host);
      const missing = defaultEndpoints({ DOCKER_CONFIG: configFolder, DOCKER_CONTEXT: "nope" });
      expect(missing[0]?.problem).toContain('no Docker context named "nope"');
    } finally {
      rmSync(configFolder, { recursive: true, force: true });
    }
  });
});
