import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import type { Logger } from "pino";
import { buildLabels } from "../container/labels.ts";
import type { ContainerEngine, EngineContainer } from "../engine/container-engine.ts";
import {
  describeDockerError,
  destroyStream,
  removeNetwork,
  statusCodeOf,
  teardownContainer,
} from "../engine/engine-operations.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { parseAccessLogLine } from "./access-log.ts";
import type { NetworkPolicy } from "./network-policy.ts";
import { requireProxyImage, runtimeDirectory, startProxyContainer } from "./proxy-container.ts";
import { proxyImage, proxyPort } from "./proxy-image.ts";
import { createSessionNetwork, roleLabel, type SessionNetwork } from "./session-network.ts";
import { renderSquidConfig, renderSquidHosts } from "./squid-config.ts";
import { subnetPoolCidr } from "./subnet-pool.ts";

export type EgressProxyOptions = {
  docker: ContainerEngine;
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
  private readonly docker: ContainerEngine;
  private readonly options: EgressProxyOptions;
  private readonly lifeline: NodeJS.ReadWriteStream;
  private readonly logStream: NodeJS.ReadableStream;
  private readonly sessions = new Map<string, SessionEntry>();
  /**
   * Sessions detached in the last few seconds, by address: squid writes a request's log line when
   * the request ends, which can be just after the sandbox is gone. Its line still names its run.
   */
  private readonly detached = new Map<string, SessionEntry>();
  private closed = false;

  private constructor(init: {
    options: EgressProxyOptions;
    container: EngineContainer;
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
    await requireEgressNetwork(docker, egressNetwork);
    const deadlineSeconds = options.deadlineSeconds ?? 24 * 60 * 60;
    const name = `codeaction-proxy-${options.managerId.slice(0, 8)}-${randomUUID().slice(0, 8)}`;
    const unpinned = options.unpinnedResolutions ? { unpinnedResolutions: options.unpinnedResolutions } : {};
    const started = await startProxyContainer(docker, {
      image,
      name,
      labels: buildLabels({
        managerId: options.managerId,
        deadline: new Date(Date.now() + deadlineSeconds * 1000),
        extra: { [roleLabel]: "egress-proxy" },
      }),
      config: renderSquidConfig({
        policy: options.policy,
        clientNetworks: [subnetPoolCidr()],
        port: proxyPort,
        runtimeDirectory,
        ...unpinned,
      }),
      hosts: renderSquidHosts({ policy: options.policy, ...unpinned }),
      deadlineSeconds,
      egressNetwork,
      startTimeoutMs: options.startTimeoutMs ?? 30_000,
      logger: options.logger,
    });
    options.logger?.debug({ containerId: started.container.id.slice(0, 12), image }, "egress proxy started");
    return new EgressProxy({ options, name, ...started });
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
    const network = await createSessionNetwork(this.docker, {
      sessionId: options.sessionId,
      managerId: this.options.managerId,
      deadline: new Date(Date.now() + (this.options.deadlineSeconds ?? 24 * 60 * 60) * 1000),
      proxyContainerId: this.containerId,
    });
    this.detached.delete(network.sandboxAddress);
    this.sessions.set(network.sandboxAddress, { network, logger: options.logger });
    return network;
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
        this.options.logger?.debug({ error: describeDockerError(error) }, "proxy disconnect failed");
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
    destroyStream(this.logStream);
    await teardownContainer({
      container: this.docker.getContainer(this.containerId),
      lifeline: this.lifeline,
    });
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
  }
}

/** Throws NetworkSetupError (step "proxy-start") unless the network the proxy reaches the outside through exists. */
async function requireEgressNetwork(docker: ContainerEngine, egressNetwork: string): Promise<void> {
  try {
    await docker.getNetwork(egressNetwork).inspect();
  } catch (error) {
    throw new NetworkSetupError({
      step: "proxy-start",
      reason: `the egress network "${egressNetwork}" does not exist: ${describeDockerError(error)}`,
      fix: 'Create it, or leave `egressNetwork` unset to use Docker\'s default "bridge".',
      cause: error,
    });
  }
}
