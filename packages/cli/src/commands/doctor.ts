import {
  connectDocker,
  DATA_IMAGE,
  DEFAULT_IMAGE,
  type DockerEndpoint,
  defaultEndpoints,
  engineInfo,
  imageState,
  SandboxManager,
} from "@codeaction/sandbox";

import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const doctorHelp = `Usage: codeaction doctor

Checks what code-action needs and prints one line per check: the Docker endpoint (and every one
tried), the engine's version, its runtimes (runsc for gVisor), the sandbox images, and, in a tiny
sandbox container, whether the memory and process limits and the privilege drops really apply.
Exits 1, with the fix, when code-action cannot run.

Options:
  --debug     show stack traces
  -h, --help  show this help`;

type Status = "ok" | "warn" | "fail";
type Check = { name: string; status: Status; detail: string; fix?: string };

/** The engine's client, as the sandbox package connects it (the CLI makes no Docker calls itself). */
type Dockerode = Awaited<ReturnType<typeof connectDocker>>["docker"];

/** The limits the probe container runs with: small, so reading them back proves they apply. */
const probeMemoryBytes = 256 * 1024 ** 2;
const probePids = 64;

/** Reads the limits and privileges as the program inside sees them (cgroup v1 and v2 paths). */
const probeScript = [
  "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo unknown",
  "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || echo unknown",
  "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status",
  "id -u",
].join("; ");

export async function doctorCommand(args: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments("doctor", args, {});
  if (values.help) {
    context.stdout.write(`${doctorHelp}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError({
      command: "doctor",
      message: `unexpected argument ${JSON.stringify(positionals[0])}`,
    });
  }
  const progress = createProgress({ stream: context.stderr });
  const checks: Check[] = [];
  const print = (check: Check) => {
    checks.push(check);
    progress.stop();
    const mark = check.status === "ok" ? "ok  " : check.status === "warn" ? "warn" : "FAIL";
    context.stdout.write(`${mark}  ${check.name.padEnd(16)} ${escapeForTerminal(check.detail)}\n`);
    if (check.fix && check.status !== "ok")
      context.stdout.write(`      ${"".padEnd(16)} fix: ${check.fix}\n`);
  };

  try {
    progress.update("looking for a Docker engine");
    const docker = await findEngine(context.env, print);
    if (docker) {
      progress.update("asking the engine about itself");
      const runtimes = await checkEngine(docker, print);
      await checkImages(docker, print);
      if (!checks.some((check) => check.status === "fail")) {
        progress.update("starting a probe sandbox");
        await checkSandbox(docker, print);
        if (runtimes.includes("runsc")) {
          progress.update("starting a probe sandbox under gVisor");
          await checkGvisor(docker, print);
        }
      }
    }
  } finally {
    progress.stop();
  }

  const failures = checks.filter((check) => check.status === "fail");
  if (failures.length > 0) {
    context.stdout.write(
      `\ncode-action cannot run here: ${failures.map((check) => check.name).join(", ")} failed.\n`,
    );
    const fix = failures.find((check) => check.fix)?.fix;
    if (fix) context.stderr.write(`codeaction: code-action cannot run: ${failures[0]!.detail} Fix: ${fix}\n`);
    return 1;
  }
  context.stdout.write("\ncode-action can run here.\n");
  return 0;
}

async function findEngine(
  environment: NodeJS.ProcessEnv,
  print: (check: Check) => void,
): Promise<Dockerode | undefined> {
  // Like the docker CLI: DOCKER_HOST, DOCKER_CONTEXT or the CLI's current context names the engine meant, and only it is tried.
  const endpoints = defaultEndpoints(environment);
  const outcomes = await Promise.all(endpoints.map((endpoint) => tryEndpoint(endpoint)));
  const found = outcomes.find((outcome) => outcome.docker);
  const tried = outcomes.map(
    (outcome) => `${outcome.endpoint.label} (${outcome.docker ? "answers" : outcome.reason})`,
  );
  if (found?.docker) {
    print({
      name: "Docker endpoint",
      status: "ok",
      detail: `${found.endpoint.label}${await engineKind(found.docker)}, because ${found.endpoint.reason ?? "it was given"}; tried ${tried.join(", ")}`,
    });
    return found.docker;
  }
  print({
    name: "Docker endpoint",
    status: "fail",
    detail: `no Docker engine answered. Tried ${tried.join(", ")}${endpoints.length === 1 && endpoints[0]?.reason ? ` (chosen because ${endpoints[0].reason}: only it is tried, as the docker CLI does)` : ""}.`,
    fix: "start Docker (Docker Desktop, `sudo systemctl start docker`, or `bash scripts/setup.sh` as root on Debian), fix the socket's permissions, or point DOCKER_HOST at a running engine",
  });
  return undefined;
}

/** " (Podman 4.3.1)" when the engine is Podman's Docker-compatible API, else "". */
async function engineKind(docker: Dockerode): Promise<string> {
  const podmanVersion = (await engineInfo(docker).catch(() => undefined))?.podmanVersion;
  return podmanVersion === undefined ? "" : ` (Podman ${podmanVersion})`.replace(" )", ")");
}

async function tryEndpoint(
  endpoint: DockerEndpoint,
): Promise<{ endpoint: DockerEndpoint; docker?: Dockerode; reason?: string }> {
  try {
    const { docker } = await connectDocker({ endpoints: [endpoint], timeoutMs: 2000 });
    return { endpoint, docker };
  } catch (error) {
    const attempts = (error as { attempts?: { reason: string }[] }).attempts;
    return { endpoint, reason: endpoint.problem ?? attempts?.[0]?.reason ?? (error as Error).message };
  }
}

async function checkEngine(docker: Dockerode, print: (check: Check) => void): Promise<string[]> {
  const info = await engineInfo(docker);
  print({
    name: "Engine",
    status: "ok",
    detail: `${info.podmanVersion === undefined ? `Docker ${info.version} (API ${info.apiVersion})` : `Podman ${info.podmanVersion} (Docker-compatible API ${info.apiVersion}${info.rootless ? ", rootless" : ""})`}, ${info.os}/${info.arch}, kernel ${info.kernelVersion}, cgroup v${info.cgroupVersion ?? "?"} (${info.cgroupDriver ?? "?"})`,
  });
  if (info.podmanVersion !== undefined) {
    // Podman lists runsc whether or not it runs; the sandbox refuses gVisor on Podman (engine-dialect.ts).
    print({
      name: "Runtimes",
      status: "warn",
      detail: `${info.runtimes.join(", ") || "(none listed)"} (default ${info.defaultRuntime ?? "?"}); gVisor is not supported on Podman: backend "docker" only`,
      fix: 'optional, for backend "gvisor": use Docker with runsc registered',
    });
    return [];
  }
  const runtimes = info.runtimes;
  const gvisor = runtimes.includes("runsc");
  print({
    name: "Runtimes",
    status: gvisor ? "ok" : "warn",
    detail: `${runtimes.join(", ") || "(none listed)"} (default ${info.defaultRuntime ?? "?"}); gVisor ${gvisor ? "available as runsc" : "not registered"}`,
    ...(gvisor
      ? {}
      : {
          fix: 'optional, for backend "gvisor": install runsc and register it (`runsc install`, then restart dockerd)',
        }),
  });
  const engineLimits = info.memoryLimit && info.pidsLimit;
  print({
    name: "Engine limits",
    status: engineLimits ? "ok" : "fail",
    detail: `memory limits ${info.memoryLimit ? "supported" : "NOT supported"}, pids limits ${info.pidsLimit ? "supported" : "NOT supported"}; security: ${info.securityOptions.join(", ") || "none reported"}`,
    ...(engineLimits
      ? {}
      : {
          fix: "enable the memory and pids cgroup controllers (kernel boot options cgroup_enable=memory, or cgroup v2)",
        }),
  });
  return runtimes;
}

async function checkImages(docker: Dockerode, print: (check: Check) => void): Promise<void> {
  const base = await imageState(docker, "base");
  print({
    name: "Image",
    status: base.state === "missing" ? "fail" : base.state === "stale" ? "warn" : "ok",
    detail: `${DEFAULT_IMAGE} ${base.state === "current" ? "present, built from the current recipe" : base.state === "stale" ? "present, built from an older recipe" : "missing"}`,
    ...(base.state === "current"
      ? {}
      : { fix: `codeaction image build${base.state === "stale" ? " --force" : ""}` }),
  });
  const data = await imageState(docker, "data");
  print({
    name: "Data image",
    status: data.state === "current" ? "ok" : "warn",
    detail: `${DATA_IMAGE} ${data.state === "current" ? "present (numpy, pandas; ask --data)" : data.state === "stale" ? "present, built from an older recipe" : "missing (optional: only for ask --data)"}`,
    ...(data.state === "current" ? {} : { fix: "codeaction image build --data" }),
  });
}

/** A tiny sandbox container: it starts, and the limits and privilege drops apply inside it. */
async function checkSandbox(docker: Dockerode, print: (check: Check) => void): Promise<void> {
  const manager = new SandboxManager(
    {
      network: "none",
      memoryLimit: probeMemoryBytes,
      diskLimit: 16 * 1024 ** 2,
      pidsLimit: probePids,
      timeout: 20,
    },
    { docker },
  );
  try {
    const output = await runProbe(manager, print);
    if (output !== undefined) checkProbeOutput(output, print);
  } finally {
    await manager.close();
  }
}

/** The probe script's output, or undefined (and a failed check) when the container did not run it. */
async function runProbe(manager: SandboxManager, print: (check: Check) => void): Promise<string | undefined> {
  const started = performance.now();
  try {
    const session = await manager.createSession({ deadlineSeconds: 120 });
    const startMs = performance.now() - started;
    const result = await session.execute(probeScript, { timeout: 20 });
    if (result.exitCode !== 0)
      throw new Error(`the probe command failed (exit ${result.exitCode}): ${result.stderr.trim()}`);
    print({
      name: "Sandbox",
      status: "ok",
      detail: `a container started with every security flag read back (${(startMs / 1000).toFixed(1)} s)`,
    });
    return result.stdout;
  } catch (error) {
    print({
      name: "Sandbox",
      status: "fail",
      detail: `the probe container did not run: ${(error as Error).message}`,
      fix: "see the message above; `codeaction doctor --debug` shows the full error",
    });
    return undefined;
  }
}

/** The limits and privileges as the probe read them inside the container, one check each. */
function checkProbeOutput(output: string, print: (check: Check) => void): void {
  const [memoryLine = "", pidsLine = "", ...rest] = output.trim().split("\n");
  const status = Object.fromEntries(rest.map((line) => line.split(":").map((part) => part.trim())));
  const memory = Number(memoryLine.trim());
  const memoryEnforced = Number.isFinite(memory) && memory <= probeMemoryBytes;
  const pidsEnforced = pidsLine.trim() === String(probePids);
  print({
    name: "Memory limit",
    status: memoryEnforced ? "ok" : "fail",
    detail: `asked for ${probeMemoryBytes / 1024 ** 2}M, the container's cgroup says ${memoryLine.trim() || "nothing"}${memoryEnforced ? " (enforced)" : " (NOT enforced)"}`,
    ...(memoryEnforced
      ? {}
      : {
          fix: "enable the memory cgroup controller (cgroup_enable=memory swapaccount=1 on the kernel command line)",
        }),
  });
  print({
    name: "Pids limit",
    status: pidsEnforced ? "ok" : "fail",
    detail: `asked for ${probePids}, the container's cgroup says ${pidsLine.trim() || "nothing"}${pidsEnforced ? " (enforced)" : " (NOT enforced)"}`,
    ...(pidsEnforced ? {} : { fix: "enable the pids cgroup controller" }),
  });
  const capabilities = status.CapEff ?? "?";
  const noNewPrivileges = status.NoNewPrivs === "1";
  const seccomp = status.Seccomp === "2";
  const dropped = /^0+$/.test(capabilities);
  print({
    name: "Privileges",
    status: dropped && noNewPrivileges ? "ok" : "fail",
    detail: `capabilities ${dropped ? "none" : capabilities}, no-new-privileges ${noNewPrivileges ? "on" : "OFF"}, seccomp ${seccomp ? "filtering" : (status.Seccomp ?? "?")}`,
    ...(dropped && noNewPrivileges
      ? {}
      : { fix: "update Docker: the engine ignored the sandbox's security flags" }),
  });
}

/** gVisor is optional: a sandbox under runsc that runs Python is enough (its limits apply to the whole sandbox). */
async function checkGvisor(docker: Dockerode, print: (check: Check) => void): Promise<void> {
  const manager = new SandboxManager({ network: "none", backend: "gvisor", timeout: 30 }, { docker });
  try {
    const started = performance.now();
    const session = await manager.createSession({ deadlineSeconds: 120 });
    const result = await session.execute("python3 -c 'import platform; print(platform.release())'", {
      timeout: 30,
    });
    if (result.exitCode !== 0) {
      throw new Error(
        `python3 in the gVisor sandbox failed (exit ${result.exitCode}): ${result.stderr.trim().split("\n")[0]}`,
      );
    }
    print({
      name: "gVisor sandbox",
      status: "ok",
      detail: `runsc ran Python in a sandbox (kernel ${result.stdout.trim()}, ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    });
  } catch (error) {
    print({
      name: "gVisor sandbox",
      status: "warn",
      detail: `runsc is registered but a gVisor sandbox did not run: ${(error as Error).message.split("\n")[0]}`,
      fix: 'only needed for backend "gvisor"; check the engine\'s runsc logs',
    });
  } finally {
    await manager.close();
  }
}
