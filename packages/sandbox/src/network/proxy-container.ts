// The egress proxy's container: its command, its hardened create settings and their read-back, and
// the start that waits until squid accepts connections. The proxy itself (sessions, access log) is
// egress-proxy.ts.
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import type { Logger } from "pino";
import { attachLifeline, lifelineStdio } from "../container/lifeline.ts";
import type {
  ContainerCreateOptions,
  ContainerEngine,
  ContainerInspectInfo,
  EngineContainer,
  HostConfig,
} from "../engine/container-engine.ts";
import {
  describeDockerError,
  destroyStream,
  statusCodeOf,
  teardownContainer,
} from "../engine/engine-operations.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { Demultiplexer } from "../process/demultiplex.ts";
import { proxyImage, proxyUser } from "./proxy-image.ts";

/** Where squid keeps its runtime files (a tmpfs: the proxy's root is read-only). */
export const runtimeDirectory = "/run/squid";
/**
 * The proxy container's command (`sh -c`, the deadline in seconds as $1): writes the configuration it
 * is given into the tmpfs (the root is read-only), runs squid in the foreground, and ends squid when
 * standard input closes (the manager holds it open: when the manager's process dies, the proxy ends
 * with it) or at the deadline, whichever comes first. When squid ends, so does the container.
 * A background job's standard input is /dev/null in sh, hence the copy on descriptor 3.
 */
const proxyCommand = [
  "set -eu",
  `printf '%s\\n' "$CODEACTION_SQUID_CONFIG" > ${runtimeDirectory}/squid.conf`,
  `printf '%s\\n' "$CODEACTION_SQUID_HOSTS" > ${runtimeDirectory}/hosts`,
  "exec 3<&0",
  `squid -N -f ${runtimeDirectory}/squid.conf < /dev/null &`,
  "squid_pid=$!",
  '( timeout -s KILL "$1" cat <&3 > /dev/null || true; kill -TERM "$squid_pid" 2> /dev/null || true ) &',
  "exec 3<&-",
  'wait "$squid_pid"',
].join("\n");
const buildHint =
  "Build it with `node scripts/build-images.ts --flavour proxy` (or `bash scripts/setup-tests.sh` in this repository).";

/** Throws NetworkSetupError (step "proxy-image") unless the proxy image is present. */
export async function requireProxyImage(docker: ContainerEngine, image: string = proxyImage): Promise<void> {
  try {
    await docker.getImage(image).inspect();
  } catch (error) {
    throw new NetworkSetupError({
      step: "proxy-image",
      reason:
        statusCodeOf(error) === 404
          ? `the egress proxy image "${image}" is not present in the Docker engine`
          : `the egress proxy image "${image}" could not be inspected: ${describeDockerError(error)}`,
      fix: buildHint,
      cause: error,
    });
  }
}

/** A started proxy container: its lifeline, its followed log stream and squid's access log lines (stdout). */
export type StartedProxyContainer = {
  container: EngineContainer;
  lifeline: NodeJS.ReadWriteStream;
  logStream: NodeJS.ReadableStream;
  stdout: NodeJS.ReadableStream;
};

/**
 * Creates the proxy container, reads its hardening back, starts it and waits until squid accepts
 * connections. Throws NetworkSetupError (step "proxy-start"; the container is removed) when anything fails.
 */
export async function startProxyContainer(
  docker: ContainerEngine,
  options: ProxyContainerOptions & { startTimeoutMs: number; logger: Logger | undefined },
): Promise<StartedProxyContainer> {
  let container: EngineContainer;
  try {
    container = await docker.createContainer(proxyContainerSpec(options));
  } catch (error) {
    throw new NetworkSetupError({
      step: "proxy-start",
      reason: `the proxy container could not be created: ${describeDockerError(error)}`,
      fix: "Check that the Docker engine runs and accepts the settings (see docs/sandbox.md, Network).",
      cause: error,
    });
  }
  let lifeline: NodeJS.ReadWriteStream | undefined;
  let logStream: NodeJS.ReadableStream | undefined;
  try {
    const problems = findProxySpecProblems(await container.inspect());
    if (problems.length > 0) {
      throw new NetworkSetupError({
        step: "proxy-start",
        reason: `a security setting of the proxy container did not take: ${problems.join("; ")}`,
        fix: "Check the Docker engine version and its daemon.json (an engine that ignores a flag cannot run the proxy).",
      });
    }
    lifeline = await attachLifeline(container);
    await container.start();
    logStream = (await container.logs({ follow: true, stdout: true, stderr: true })) as NodeJS.ReadableStream;
    (logStream as unknown as { socket?: { unref?: () => void } }).socket?.unref?.();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    logStream.pipe(new Demultiplexer(stdout, stderr));
    await waitUntilAccepting(stderr, options.startTimeoutMs, options.logger);
    return { container, lifeline, logStream, stdout };
  } catch (error) {
    destroyStream(logStream);
    await teardownContainer({ container, lifeline }).catch(() => undefined);
    if (NetworkSetupError.isInstance(error)) throw error;
    throw new NetworkSetupError({
      step: "proxy-start",
      reason: `the proxy container did not start: ${describeDockerError(error)}`,
      fix: "See the reason above; the proxy container was removed.",
      cause: error,
    });
  }
}

/** The proxy container's settings: its name and image, labels, squid's configuration and hosts file, its deadline and egress network. */
export type ProxyContainerOptions = {
  image: string;
  name: string;
  labels: Record<string, string>;
  config: string;
  hosts: string;
  deadlineSeconds: number;
  egressNetwork: string;
};

function proxyContainerSpec(options: ProxyContainerOptions): ContainerCreateOptions {
  const memory = 256 * 1024 * 1024;
  return {
    name: options.name,
    Image: options.image,
    Entrypoint: ["sh", "-c", proxyCommand, "codeaction-proxy"],
    Cmd: [String(Math.max(1, Math.ceil(options.deadlineSeconds)))],
    User: proxyUser,
    Env: [`CODEACTION_SQUID_CONFIG=${options.config}`, `CODEACTION_SQUID_HOSTS=${options.hosts}`],
    Hostname: "proxy",
    Labels: options.labels,
    ...lifelineStdio,
    HostConfig: {
      NetworkMode: options.egressNetwork,
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      CapAdd: [],
      SecurityOpt: ["no-new-privileges"],
      Privileged: false,
      PidsLimit: 64,
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: 1e9,
      Init: true,
      IpcMode: "private",
      Tmpfs: {
        [runtimeDirectory]: "rw,noexec,nosuid,nodev,size=16m,uid=13,gid=13,mode=0700",
        "/tmp": "rw,noexec,nosuid,nodev,size=16m",
      },
      Binds: [],
      Mounts: [],
      Devices: [],
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      Ulimits: [{ Name: "core", Soft: 0, Hard: 0 }],
      // The proxy joins many networks: it must never route between them.
      Sysctls: { "net.ipv4.ip_forward": "0", "net.ipv6.conf.all.forwarding": "0" },
    },
  };
}

/** Every hardening setting of the proxy container that did not take (empty when all did). */
export function findProxySpecProblems(info: ContainerInspectInfo): string[] {
  const host = info.HostConfig as HostConfig & { Sysctls?: Record<string, string> };
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => {
    if (!ok) problems.push(problem);
  };
  expect(host.ReadonlyRootfs === true, "ReadonlyRootfs is not set");
  expect(
    (host.CapDrop ?? []).map((cap: string) => cap.toUpperCase()).includes("ALL"),
    "CapDrop does not include ALL",
  );
  expect((host.CapAdd ?? []).length === 0, `CapAdd is ${JSON.stringify(host.CapAdd)}`);
  expect(
    (host.SecurityOpt ?? []).some((option: string) => /^no-new-privileges/.test(option)),
    "no-new-privileges is not set",
  );
  expect(host.Privileged === false, "the container is privileged");
  expect(host.PidsLimit === 64, `PidsLimit is ${host.PidsLimit}`);
  expect(
    typeof host.Memory === "number" && host.Memory > 0 && host.MemorySwap === host.Memory,
    "memory is not limited",
  );
  expect(info.Config.User === proxyUser, `User is ${JSON.stringify(info.Config.User)}, not ${proxyUser}`);
  expect((info.Mounts ?? []).length === 0, `the container has mounts: ${JSON.stringify(info.Mounts)}`);
  expect(host.Sysctls?.["net.ipv4.ip_forward"] === "0", "ip_forward is not off");
  return problems;
}

/** Waits for squid's "Accepting HTTP Socket connections" on stderr; fails with squid's last words. */
async function waitUntilAccepting(
  stderr: NodeJS.ReadableStream,
  timeoutMs: number,
  logger: Logger | undefined,
): Promise<void> {
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const reader = createInterface({ input: stderr });
    const timer = setTimeout(
      () => finish(new Error(`squid did not accept connections within ${timeoutMs} ms`)),
      timeoutMs,
    );
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reader.removeAllListeners("line");
      reader.on("line", (line) => logger?.debug({ line }, "squid"));
      if (error) {
        reject(new Error(`${error.message}; squid said: ${lines.slice(-8).join(" | ") || "nothing"}`));
      } else {
        resolve();
      }
    };
    reader.on("line", (line) => {
      lines.push(line);
      if (lines.length > 50) lines.shift();
      if (/Accepting HTTP Socket connections/.test(line)) finish();
    });
    reader.on("close", () => finish(new Error("the proxy container exited")));
  });
}
