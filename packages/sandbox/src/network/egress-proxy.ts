import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import { PassThrough } from "node:stream";
import type Dockerode from "dockerode";
import type { Logger } from "pino";
import { Demultiplexer } from "../demultiplex.ts";
import { removeContainer, statusCodeOf } from "../docker-operations.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { buildLabels } from "../labels.ts";
import { attachLifeline, closeLifeline, lifelineStdio } from "../lifeline.ts";
import { type EgressLogEntry, parseAccessLogLine } from "./access-log.ts";
import type { NetworkPolicy } from "./network-policy.ts";
import { proxyImage, proxyPort, proxyUser } from "./proxy-image.ts";
import type { SessionNetwork } from "./session-network.ts";
import { renderSquidConfig, renderSquidHosts } from "./squid-config.ts";
import { randomSubnet, subnetPoolCidr } from "./subnet-pool.ts";

/** Label that tells the proxy container and the session networks apart from sandboxes. */
export const roleLabel = "codeaction.role";
/** Where squid keeps its runtime files (a tmpfs: the proxy's root is read-only). */
const runtimeDirectory = "/run/squid";
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
const buildHint = "Build it with `node scripts/build-images.ts` (or `pnpm setup` in this repository).";

export type EgressProxyOptions = {
  docker: Dockerode;
  policy: NetworkPolicy;
  /** The manager's id, written on the proxy and on every session network (the sweep keys on it). */
  managerId: string;
  /** pino logger; every allowed and refused request is logged at info level. Silent without one. */
  logger?: Logger;
  image?: string;
  /** The network the proxy reaches the outside through (default Docker's "bridge"). */
  egressNetwork?: string;
  /** The proxy container ends itself this many seconds after creation (default 24 hours). */
  deadlineSeconds?: number;
  /** How long to wait for squid to accept connections (default 30 s). */
  startTimeoutMs?: number;
  /** Test only: names put in squid's hosts file without pinning them (see SquidConfigOptions). */
  unpinnedResolutions?: Record<string, string>;
};

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\(HTTP code \d+\) [a-z ]+- /, "").trim();
}

/** Throws NetworkSetupError (step "proxy-image") unless the proxy image is present. */
export async function requireProxyImage(docker: Dockerode, image: string = proxyImage): Promise<void> {
  try {
    await docker.getImage(image).inspect();
  } catch (error) {
    throw new NetworkSetupError({
      step: "proxy-image",
      reason:
        statusCodeOf(error) === 404
          ? `the egress proxy image "${image}" is not present in the Docker engine`
          : `the egress proxy image "${image}" could not be inspected: ${describe(error)}`,
      fix: buildHint,
      cause: error,
    });
  }
}

type SessionEntry = { network: SessionNetwork; logger: Logger | undefined };

/** How long a detached session's requests are still attributed to it in the log. */
const detachedLogGraceMs = 5000;

/**
 * One squid egress proxy per manager. It sits on the egress network (its way out) and on every
 * session's internal network (no route out: the sandbox's only peer is the proxy). squid allows
 * what the allow-list allows; its access log is read back and logged per session.
 */
export class EgressProxy {
  readonly containerId: string;
  readonly containerName: string;
  private readonly docker: Dockerode;
  private readonly options: EgressProxyOptions;
  private readonly lifeline: NodeJS.ReadWriteStream;
  private readonly logStream: NodeJS.ReadableStream;
  private readonly sessions = new Map<string, SessionEntry>();
  /**
   * Sessions detached in the last few seconds, by address: squid writes a request's log line when
   * the request ends, which can be just after the sandbox is gone. Its line still names its run.
   */
  private readonly detached = new Map<string, SessionEntry>();
  private readonly listeners = new Set<(entry: EgressLogEntry) => void>();
  private closed = false;

  private constructor(init: {
    options: EgressProxyOptions;
    container: Dockerode.Container;
    name: string;
    lifeline: NodeJS.ReadWriteStream;
    logStream: NodeJS.ReadableStream;
    stdout: NodeJS.ReadableStream;
  }) {
    this.options = init.options;
    this.docker = init.options.docker;
    this.containerId = init.container.id;
    this.containerName = init.name;
    this.lifeline = init.lifeline;
    this.logStream = init.logStream;
    createInterface({ input: init.stdout }).on("line", (line) => this.onAccessLogLine(line));
  }

  /**
   * Creates, verifies and starts the proxy container and waits until squid accepts connections.
   * Throws NetworkSetupError (the container is removed) when anything fails.
   */
  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    const { docker } = options;
    const image = options.image ?? proxyImage;
    const egressNetwork = options.egressNetwork ?? "bridge";
    await requireProxyImage(docker, image);
    try {
      await docker.getNetwork(egressNetwork).inspect();
    } catch (error) {
      throw new NetworkSetupError({
        step: "proxy-start",
        reason: `the egress network "${egressNetwork}" does not exist: ${describe(error)}`,
        fix: 'Create it, or leave `egressNetwork` unset to use Docker\'s default "bridge".',
        cause: error,
      });
    }
    const deadlineSeconds = options.deadlineSeconds ?? 24 * 60 * 60;
    const name = `codeaction-proxy-${options.managerId.slice(0, 8)}-${randomUUID().slice(0, 8)}`;
    const config = renderSquidConfig({
      policy: options.policy,
      clientNetworks: [subnetPoolCidr()],
      port: proxyPort,
      runtimeDirectory,
      ...(options.unpinnedResolutions ? { unpinnedResolutions: options.unpinnedResolutions } : {}),
    });
    const hosts = renderSquidHosts({
      policy: options.policy,
      ...(options.unpinnedResolutions ? { unpinnedResolutions: options.unpinnedResolutions } : {}),
    });
    const labels = buildLabels({
      managerId: options.managerId,
      deadline: new Date(Date.now() + deadlineSeconds * 1000),
      extra: { [roleLabel]: "egress-proxy" },
    });
    let container: Dockerode.Container;
    try {
      container = await docker.createContainer(
        proxyContainerSpec({ image, name, labels, config, hosts, deadlineSeconds, egressNetwork }),
      );
    } catch (error) {
      throw new NetworkSetupError({
        step: "proxy-start",
        reason: `the proxy container could not be created: ${describe(error)}`,
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
      logStream = (await container.logs({
        follow: true,
        stdout: true,
        stderr: true,
      })) as NodeJS.ReadableStream;
      (logStream as unknown as { socket?: { unref?: () => void } }).socket?.unref?.();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      logStream.pipe(new Demultiplexer(stdout, stderr));
      const proxy = new EgressProxy({ options, container, name, lifeline, logStream, stdout });
      await waitUntilAccepting(stderr, options.startTimeoutMs ?? 30_000, options.logger);
      options.logger?.debug({ containerId: container.id.slice(0, 12), image }, "egress proxy started");
      return proxy;
    } catch (error) {
      closeLifeline(lifeline);
      (logStream as unknown as { destroy?: () => void } | undefined)?.destroy?.();
      await removeContainer(container).catch(() => undefined);
      if (NetworkSetupError.isInstance(error)) throw error;
      throw new NetworkSetupError({
        step: "proxy-start",
        reason: `the proxy container did not start: ${describe(error)}`,
        fix: "See the reason above; the proxy container was removed.",
        cause: error,
      });
    }
  }

  /** Called with every access log entry (after it is logged). Returns a function that unsubscribes. */
  onRequest(listener: (entry: EgressLogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Creates a session's internal network (no route out, no host address on the bridge) and joins the
   * proxy to it. Requests from the session's sandbox are logged through `logger` (give it the run id).
   */
  async attachSession(options: { sessionId: string; logger?: Logger }): Promise<SessionNetwork> {
    if (this.closed) {
      throw new NetworkSetupError({
        step: "session-network",
        reason: "the egress proxy was stopped",
        fix: "Create a new sandbox manager.",
      });
    }
    const { docker } = this;
    let lastError: unknown;
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const subnet = randomSubnet();
      const networkName = `codeaction-net-${options.sessionId.slice(0, 12)}-${randomUUID().slice(0, 6)}`;
      let networkId: string;
      try {
        const created = await docker.createNetwork({
          Name: networkName,
          Driver: "bridge",
          Internal: true,
          CheckDuplicate: true,
          EnableIPv6: false,
          Attachable: false,
          IPAM: { Driver: "default", Config: [{ Subnet: subnet.subnet, Gateway: subnet.gateway }] },
          Options: {
            // No address on the host side of the bridge: the sandbox cannot reach the host's services.
            "com.docker.network.bridge.inhibit_ipv4": "true",
            "com.docker.network.bridge.enable_ip_masquerade": "false",
          },
          Labels: buildLabels({
            managerId: this.options.managerId,
            deadline: new Date(Date.now() + (this.options.deadlineSeconds ?? 24 * 60 * 60) * 1000),
            extra: { [roleLabel]: "session-network" },
          }),
        });
        networkId = created.id;
      } catch (error) {
        lastError = error;
        if (/overlap/i.test(describe(error))) continue;
        break;
      }
      try {
        const info = (await docker.getNetwork(networkId).inspect()) as {
          Internal?: boolean;
          Options?: Record<string, string>;
        };
        if (info.Internal !== true || info.Options?.["com.docker.network.bridge.inhibit_ipv4"] !== "true") {
          throw new Error(`the engine created ${networkName} without Internal or inhibit_ipv4`);
        }
        await docker.getNetwork(networkId).connect({
          Container: this.containerId,
          EndpointConfig: { IPAMConfig: { IPv4Address: subnet.proxyAddress } },
        });
      } catch (error) {
        await removeNetwork(docker, networkId).catch(() => undefined);
        throw new NetworkSetupError({
          step: "session-network",
          reason: `the proxy could not join the session network ${networkName}: ${describe(error)}`,
          fix: "The proxy container may have stopped; create a new sandbox manager.",
          cause: error,
        });
      }
      const proxyUrl = `http://${subnet.proxyAddress}:${proxyPort}`;
      const noProxy = "localhost,127.0.0.1,::1";
      const network: SessionNetwork = {
        ...subnet,
        networkName,
        networkId,
        sessionId: options.sessionId,
        environment: {
          HTTP_PROXY: proxyUrl,
          HTTPS_PROXY: proxyUrl,
          NO_PROXY: noProxy,
          http_proxy: proxyUrl,
          https_proxy: proxyUrl,
          no_proxy: noProxy,
        },
      };
      this.detached.delete(subnet.sandboxAddress);
      this.sessions.set(subnet.sandboxAddress, { network, logger: options.logger });
      return network;
    }
    throw new NetworkSetupError({
      step: "session-network",
      reason: `the session's internal network could not be created: ${describe(lastError)}`,
      fix: "Check `docker network ls` for leftovers (`codeaction-net-*`) and the engine's log.",
      cause: lastError,
    });
  }

  /** Takes the proxy off a session's network and removes the network (after the sandbox is gone). */
  async detachSession(network: SessionNetwork): Promise<void> {
    const address = network.sandboxAddress;
    const entry = this.sessions.get(address);
    this.sessions.delete(address);
    if (entry) {
      this.detached.set(address, entry);
      setTimeout(() => {
        if (this.detached.get(address) === entry) this.detached.delete(address);
      }, detachedLogGraceMs).unref();
    }
    try {
      await this.docker
        .getNetwork(network.networkId)
        .disconnect({ Container: this.containerId, Force: true });
    } catch (error) {
      if (statusCodeOf(error) !== 404)
        this.options.logger?.debug({ error: describe(error) }, "proxy disconnect failed");
    }
    await removeNetwork(this.docker, network.networkId);
  }

  /** Removes the proxy container and every session network still attached. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const networks = [...this.sessions.values()].map((session) => session.network);
    this.sessions.clear();
    this.detached.clear();
    closeLifeline(this.lifeline);
    (this.logStream as unknown as { destroy?: () => void }).destroy?.();
    await removeContainer(this.docker.getContainer(this.containerId));
    await Promise.allSettled(networks.map((network) => removeNetwork(this.docker, network.networkId)));
  }

  private onAccessLogLine(line: string): void {
    const entry = parseAccessLogLine(line);
    if (!entry) return;
    const session = this.sessions.get(entry.client) ?? this.detached.get(entry.client);
    const logger = session?.logger ?? this.options.logger;
    logger?.info(
      {
        sessionId: session?.network.sessionId,
        decision: entry.decision,
        method: entry.method,
        host: entry.host,
        url: entry.url,
        status: entry.status,
        client: entry.client,
      },
      entry.decision === "allowed" ? "egress request allowed" : "egress request refused",
    );
    for (const listener of this.listeners) listener(entry);
  }
}

/** Removes a network; 404 counts as done. */
export async function removeNetwork(docker: Dockerode, networkId: string): Promise<void> {
  try {
    await docker.getNetwork(networkId).remove();
  } catch (error) {
    if (statusCodeOf(error) === 404) return;
    throw error;
  }
}

function proxyContainerSpec(options: {
  image: string;
  name: string;
  labels: Record<string, string>;
  config: string;
  hosts: string;
  deadlineSeconds: number;
  egressNetwork: string;
}): Dockerode.ContainerCreateOptions {
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
export function findProxySpecProblems(info: Dockerode.ContainerInspectInfo): string[] {
  const host = info.HostConfig as Dockerode.HostConfig & { Sysctls?: Record<string, string> };
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
