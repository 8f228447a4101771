import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { parseSandboxConfig, type SandboxConfig, type SandboxConfigInput } from "./config.ts";
import { detectEngineDialect, dockerDialect, type EngineDialect } from "./container/engine-dialect.ts";
import { buildLabels, labelKeys } from "./container/labels.ts";
import { type LaunchedContainer, launchContainer, mountsWork } from "./container/launch.ts";
import { liveContainerLimit } from "./container/memory-admission.ts";
import { answeringDocker, inspectSandboxImage, requireRuntime } from "./container/readiness.ts";
import { type SweptContainer, sweepContainers } from "./container/sweep.ts";
import { allocateIdentity, type SandboxIdentity } from "./container/user-ids.ts";
import type { ContainerEngine } from "./engine/container-engine.ts";
import { removeContainer, teardownContainer } from "./engine/engine-operations.ts";
import { SandboxError } from "./errors/sandbox-error.ts";
import { type FileToPlace, filesToPlace } from "./files/placement-path.ts";
import { overPoolCopyLimit } from "./files/pool-copy-limit.ts";
import { requireImageCommands } from "./images/image-commands.ts";
import {
  type CreateSessionOptions,
  callerLabels,
  checkedDeadlineSeconds,
  defaultDeadlineSeconds,
  type SandboxManagerOptions,
} from "./manager-options.ts";
import { SessionNetworking } from "./network/network-setup.ts";
import { requireProxyImage } from "./network/proxy-container.ts";
import type { SessionNetwork } from "./network/session-network.ts";
import { sweepNetworks } from "./network/sweep-networks.ts";
import { ContainerPool, type PoolStatus } from "./pool.ts";
import { PooledSession } from "./pooled-session.ts";
import type { SandboxPrelaunch } from "./prelaunch/prelaunch.ts";
import { prelaunchEngineChecks, takeOverPrelaunched } from "./prelaunch/take-over.ts";
import { checkedCommand, type WarmCommand, WarmProcess, warmCommandOf } from "./process/warm-process.ts";
import { SandboxSession } from "./session.ts";

/** A prelaunched container taken over: its uid held here, its kill helper started here. */
type TakenOver = { identity: SandboxIdentity; launched: LaunchedContainer };

/** A warm container idle longer than this is replaced, so every one handed out has most of its deadline left. */
const poolMaximumIdleMs = 10 * 60 * 1000;

/**
 * Connects to Docker, checks the runtime and the image, sweeps containers left behind, and creates
 * sessions. Fails closed: no Docker, no sandbox.
 */
export class SandboxManager {
  readonly config: SandboxConfig;
  /** Written on every container this manager creates; the sweep never touches its own. */
  readonly managerId: string;
  private readonly logger: Logger | undefined;
  private docker: ContainerEngine | undefined;
  private readying: Promise<void> | undefined;
  private imageEnv: string[] = [];
  private dialect: EngineDialect = dockerDialect;
  private readonly requiredCommands: string[];
  private readonly sessions = new Set<SandboxSession>();
  private closed = false;
  private readonly warmCommand: WarmCommand | undefined;
  private readonly pool: ContainerPool<PooledSession>;
  /** The egress proxy and per-session networks for an allow-list; idle for "none" and "full". */
  private readonly networking: SessionNetworking;
  /** The prelaunch given: its container becomes the pool's first item at ready(); close() closes it. */
  private readonly prelaunch: SandboxPrelaunch | undefined;
  /** Until the pool's first session: the next container it hands out is the prelaunch's (its files mounted). */
  private prelaunchNext = true;

  constructor(config?: SandboxConfigInput, options: SandboxManagerOptions = {}) {
    this.config = parseSandboxConfig(config ?? {});
    this.managerId = options.prelaunch?.managerId ?? randomUUID();
    this.prelaunch = options.prelaunch;
    this.logger = options.logger?.child({ component: "sandbox", managerId: this.managerId.slice(0, 8) });
    this.docker = options.docker;
    this.warmCommand = options.warmCommand ? warmCommandOf(options.warmCommand) : undefined;
    this.requiredCommands = [...(options.requiredCommands ?? [])];
    this.networking = new SessionNetworking(this.config.network, {
      managerId: this.managerId,
      ...(this.logger ? { logger: this.logger } : {}),
    });
    const network = this.config.network;
    this.pool = new ContainerPool<PooledSession>({
      size: network === "none" || network === "full" ? this.config.pool : 0,
      // maxConcurrent, lowered to what fits in maxTotalMemory (memory-admission.ts).
      maxConcurrent: liveContainerLimit(this.config),
      create: (signal) => this.createPooledSession(signal),
      discard: (session) => session.close(),
      usable: (session) => session.warmAndAlive && Date.now() - session.createdAt < poolMaximumIdleMs,
      idleDrainMs: this.config.poolIdleSeconds * 1000,
      ...(this.logger ? { logger: this.logger } : {}),
    });
  }

  /**
   * Containers this manager keeps alive at once: `maxConcurrent`, lowered to what fits in
   * `maxTotalMemory` (or this machine's memory). A session past it waits in line.
   */
  get liveLimit(): number {
    return liveContainerLimit(this.config);
  }

  /** Warm containers idle, starting, live in all, and requests waiting for a container. */
  poolStatus(): PoolStatus {
    return this.pool.status();
  }

  /** Connects and pings, checks the runtime and the image, and sweeps. Memoized; a failure can be retried. */
  ready(): Promise<void> {
    this.readying ??= this.prepare().catch((error: unknown) => {
      this.readying = undefined;
      throw error;
    });
    return this.readying;
  }

  private async prepare(): Promise<void> {
    const clientGiven = this.docker !== undefined;
    const docker = await answeringDocker(this.docker, this.config, this.logger);
    this.docker = docker;
    // The prelaunch's worker made the same engine checks for the same settings moments ago, in this
    // process, against the engine these settings name: not asked again (version and info are the
    // engine's slowest answers).
    const checked = clientGiven ? undefined : await prelaunchEngineChecks(this.prelaunch, this.config);
    if (checked) this.logger?.debug("engine checks: the prelaunch's, same settings");
    this.dialect = checked ?? (await this.checkEngine(docker));
    // An allow-list needs the egress proxy image: check it now, not at the first session.
    if (this.networking.policy) await requireProxyImage(docker);
    const image = await inspectSandboxImage(docker, this.config.image);
    this.imageEnv = image.Config?.Env ?? [];
    await this.sweep();
    await requireImageCommands(docker, {
      image: this.config.image,
      env: this.imageEnv,
      commands: this.requiredCommands,
      imageLabels: image.Config?.Labels ?? {},
      labels: buildLabels({ managerId: this.managerId, deadline: new Date(Date.now() + 60_000) }),
    });
    // The prelaunched container is the pool's first item (an allow-list's sessions need their own
    // network, so it is not used there): taken over now, in the background.
    const prelaunch = this.prelaunch;
    if (prelaunch && !this.networking.policy && !this.closed) {
      this.pool.adopt((signal) => this.adoptPrelaunched(prelaunch, signal));
    }
    this.pool.start();
  }

  /**
   * The prelaunched container taken over (read back again here, its kill helper started here) and
   * made warm like a pool's; undefined (the reason logged) when it cannot be used.
   */
  private async adoptPrelaunched(
    prelaunch: SandboxPrelaunch,
    signal: AbortSignal,
  ): Promise<PooledSession | undefined> {
    const taken = await takeOverPrelaunched(this.requireDocker(), prelaunch, {
      config: this.config,
      managerId: this.managerId,
      imageEnv: this.imageEnv,
      dialect: this.dialect,
      logger: this.logger,
      warmCommand: this.warmCommand,
    });
    if (!taken) return undefined;
    return this.createPooledSession(signal, taken).catch((error: unknown) => {
      this.logger?.debug({ error: String(error) }, "prelaunched container not made warm");
      return undefined;
    });
  }

  /** Podman's refusals and dialect, and the runtime the settings need: the dialect. */
  private async checkEngine(docker: ContainerEngine): Promise<EngineDialect> {
    // Podman: refused where it cannot hold the settings, else the way it takes them.
    const dialect = await detectEngineDialect(docker, this.config);
    await requireRuntime(docker, this.config, { allowList: this.networking.policy !== undefined });
    return dialect;
  }

  /** Removes managed containers whose owner is gone or whose deadline passed (never another live manager's). */
  async sweep(): Promise<SweptContainer[]> {
    const docker = this.requireDocker();
    const swept = await sweepContainers(docker, {
      ownManagerId: this.managerId,
      ...(this.logger ? { logger: this.logger } : {}),
    });
    await sweepNetworks(docker, {
      ownManagerId: this.managerId,
      ...(this.logger ? { logger: this.logger } : {}),
    });
    return swept;
  }

  private requireDocker(): ContainerEngine {
    if (!this.docker) {
      throw new SandboxError("Call `await manager.ready()` first.", { code: "not-ready" });
    }
    return this.docker;
  }

  /** A started container whose every security flag was read back. */
  async createSession(options: CreateSessionOptions = {}): Promise<SandboxSession> {
    options.signal?.throwIfAborted();
    if (this.closed)
      throw new SandboxError("This sandbox manager was cleaned up.", { code: "manager-closed" });
    await this.ready();
    const docker = this.requireDocker();
    const deadlineSeconds = checkedDeadlineSeconds(options);
    const command = checkedCommand(options.command);
    // The one way to get a container with the default deadline and labels: the pool's (warm ones,
    // and the prelaunched one first), when it offers any; else a container of the request's own.
    const defaults = options.deadlineSeconds === undefined && options.labels === undefined;
    if (defaults && this.pool.offers && !(await this.mountedOwnStart(options))) {
      const pooled = await this.pool.take(options.signal);
      this.prelaunchNext = false;
      this.sessions.add(pooled);
      return pooled;
    }
    const deadline = new Date(Date.now() + deadlineSeconds * 1000);
    const labels = buildLabels({ managerId: this.managerId, deadline, extra: callerLabels(options) });
    // Waits (in order) while maxConcurrent containers are alive; load never fails a request.
    const slot = await this.pool.reserve(options.signal);
    let identity: SandboxIdentity | undefined;
    let sessionNetwork: Awaited<ReturnType<SessionNetworking["attach"]>>;
    let launch: () => Promise<LaunchedContainer>;
    let launched: LaunchedContainer;
    try {
      // The sandbox's own uid: kept for its container's replacements, given back when it is destroyed.
      identity = allocateIdentity(this.config);
      // For an allow-list: the session's own internal network, the egress proxy on it (NetworkSetupError if not).
      sessionNetwork = await this.networking.attach(docker, {
        sessionId: randomUUID(),
        ...(options.logger ? { logger: options.logger } : {}),
      });
      launch = this.launcher(identity.config, { labels, deadline, sessionNetwork });
      launched = await this.launcher(identity.config, {
        ...{ labels, deadline, sessionNetwork, command },
        ...this.mountsFor(options.mountFiles),
      })();
    } catch (error) {
      slot.release();
      identity?.release();
      await this.networking.detach(sessionNetwork).catch(() => undefined);
      throw error;
    }
    const session = new SandboxSession({
      config: identity.config,
      launched,
      relaunch: launch,
      onDestroyed: (ended) => {
        this.sessions.delete(ended);
        slot.release();
        identity?.release();
        this.networking.detach(sessionNetwork).catch(() => undefined);
      },
      ...((options.logger ?? this.logger) ? { logger: options.logger ?? this.logger } : {}),
    });
    this.sessions.add(session);
    return session;
  }

  /**
   * Whether the session's files are mounted in a container of its own instead of copied into a warm
   * one: on an engine that mounts, when they add up to more than `poolCopyLimit`.
   */
  private async mountedOwnStart(options: CreateSessionOptions): Promise<boolean> {
    // The pool's first container is the prelaunch's, which mounted the files it was given at its start.
    const mountedAhead = new Set(this.prelaunchNext ? (this.prelaunch?.files ?? []) : []);
    const files = options.mountFiles?.filter((file) => !mountedAhead.has(file));
    if (!files?.length || !mountsWork(this.requireDocker(), this.dialect)) return false;
    const { over, bytes } = await overPoolCopyLimit(files, this.config.poolCopyLimit);
    if (over)
      (options.logger ?? this.logger)?.debug(
        { bytes, poolCopyLimit: this.config.poolCopyLimit },
        "data files over the pool's copy limit: a container of the session's own mounts them",
      );
    return over;
  }

  /** The files a session's first container mounts: on a local Docker engine only (else copied). */
  private mountsFor(files: string[] | undefined): { mountFiles?: FileToPlace[] } {
    if (!files?.length || !mountsWork(this.requireDocker(), this.dialect)) return {};
    return { mountFiles: filesToPlace(files) };
  }

  /** Starts a container for one sandbox identity; called again for each replacement container. */
  private launcher(
    config: SandboxConfig,
    options: {
      labels: Record<string, string>;
      deadline: Date;
      sessionNetwork?: SessionNetwork | undefined;
      /** The first launch's command (process/warm-process.ts); a replacement container starts none. */
      command?: WarmCommand | undefined;
      /** The first launch's files to mount (a replacement container gets copies). */
      mountFiles?: FileToPlace[];
    },
  ): (signal?: AbortSignal) => Promise<LaunchedContainer> {
    const docker = this.requireDocker();
    const { sessionNetwork, command, mountFiles, ...rest } = options;
    return (signal) =>
      launchContainer(docker, config, {
        ...rest,
        imageEnv: this.imageEnv,
        dialect: this.dialect,
        ...(signal ? { signal } : {}),
        ...(this.logger ? { logger: this.logger } : {}),
        ...(sessionNetwork ? { sessionNetwork } : {}),
        ...(command ? { firstCommand: command } : {}),
        ...(mountFiles ? { mountFiles } : {}),
      });
  }

  /**
   * One warm container for the pool: default deadline, default labels, the warm command waiting.
   * Started here, or `taken` over from a prelaunch.
   */
  private async createPooledSession(signal: AbortSignal, taken?: TakenOver): Promise<PooledSession> {
    const deadline = new Date(Date.now() + defaultDeadlineSeconds * 1000);
    const labels = buildLabels({ managerId: this.managerId, deadline });
    const identity = taken?.identity ?? allocateIdentity(this.config);
    // Only the first launch stops when the pool drains; a replacement belongs to its session.
    const launch = this.launcher(identity.config, { labels, deadline });
    const launched =
      taken?.launched ??
      (await launch(signal).catch((error: unknown) => {
        identity.release();
        throw error;
      }));
    // A prelaunched container's warm command started with it (prelaunch/take-over.ts).
    let warm: WarmProcess | undefined = taken?.launched.warm;
    const warmCommand = warm ? undefined : this.warmCommand;
    try {
      // A pool container is handed out only with its kill helper ready; its warm command starts
      // meanwhile.
      await Promise.all([
        warmCommand
          ? WarmProcess.start(launched.container, warmCommand, {
              cwd: this.config.workdir,
              guard: launched.guardExecs,
            }).then((started) => (warm = started))
          : undefined,
        launched.helper.ready,
      ]);
      signal.throwIfAborted();
    } catch (error) {
      await teardownContainer({ ...launched, warm }).catch(() => undefined);
      identity.release();
      throw error;
    }
    return new PooledSession({
      config: identity.config,
      // The warm process is the container's, as a cold container's first command is.
      launched: warm ? { ...launched, warm } : launched,
      relaunch: () => launch(),
      // Only handed-out sessions are in `sessions`; an idle one the pool discards frees its own slot.
      onDestroyed: (ended) => {
        identity.release();
        if (this.sessions.delete(ended)) this.pool.release();
      },
      ...(this.logger ? { logger: this.logger } : {}),
    });
  }

  /**
   * Marks the manager closed (a later `createSession` fails), drains the warm pool (no more fills),
   * closes every session of this manager and removes any container still carrying its id.
   * Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.prelaunch?.close();
    await this.pool.drain();
    await Promise.allSettled([...this.sessions].map((session) => session.close()));
    if (!this.docker) return;
    const docker = this.docker;
    const leftovers = await docker
      .listContainers({ all: true, filters: { label: [`${labelKeys.managerId}=${this.managerId}`] } })
      .catch(() => []);
    await Promise.allSettled(leftovers.map((summary) => removeContainer(docker.getContainer(summary.Id))));
    await this.networking.close().catch(() => undefined);
  }

  /** @deprecated Use {@link SandboxManager.close}: the same call under the one disposal name. */
  cleanupAll(): Promise<void> {
    return this.close();
  }

  /** `await using manager = ...`: the same as {@link SandboxManager.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
