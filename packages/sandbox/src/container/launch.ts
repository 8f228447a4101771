import type { Logger } from "pino";
import type { SandboxConfig } from "../config.ts";
import type { ContainerEngine, ContainerInspectInfo, EngineContainer } from "../engine/container-engine.ts";
import { removeContainer, teardownContainer } from "../engine/engine-operations.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { SecurityFlagError } from "../errors/security-flag-error.ts";
import {
  type CheckedMount,
  checkMounts,
  mountsUnverifiable,
  releaseMounts,
  verifyMounts,
} from "../files/mount-files.ts";
import type { PlacedFile } from "../files/place-files.ts";
import type { FileToPlace } from "../files/placement-path.ts";
import { applySessionNetwork } from "../network/network-setup.ts";
import type { SessionNetwork } from "../network/session-network.ts";
import { KillHelper } from "../process/kill-helper.ts";
import { execsNeedGuard } from "../process/syscall-guard.ts";
import { type WarmCommand, WarmProcess } from "../process/warm-process.ts";
import type { BindMount } from "./bind-mounts.ts";
import { buildContainerSpec, runtimeFor, verifyContainerSpec } from "./container-spec.ts";
import { dockerDialect, type EngineDialect, waysOf } from "./engine-dialect.ts";
import { attachLifeline } from "./lifeline.ts";
import { readBackInside } from "./podman-read-back.ts";

/** A started, verified container with its lifeline and kill helper. */
export type LaunchedContainer = {
  container: EngineContainer;
  containerId: string;
  /** The stdin attach whose end (our process dying) ends the container's PID 1 child. */
  lifeline: NodeJS.ReadWriteStream;
  helper: KillHelper;
  /** Whether each exec must install the seccomp guard (the runtime does not filter execs: gVisor). */
  guardExecs: boolean;
  /** Files a prelaunch places in it: settles once its worker is done (the files placed by then). */
  placedFiles?: Promise<PlacedFile[]>;
  /** The process it started with (`createSession({ command })`), for the session to hand out (`takeWarm()`). */
  readonly warm?: WarmProcess;
  /** Host files bind-mounted read-only at its start (files/mount-files.ts): host path, real path mounted. */
  mounted?: MountedFile[];
  /** The files asked to be mounted that the check refused (to be copied), and why. */
  mountRefusals?: MountRefusalNote[];
};

/** A file the mount check refused, and why ("it is a link", ...). */
export type MountRefusalNote = { hostPath: string; reason: string };

/** A host file bind-mounted at a container's start: where it is inside, the path given, the real path mounted. */
export type MountedFile = PlacedFile & { hostPath: string; source: string };

/**
 * Whether host files may be bind-mounted into this engine's containers: a Docker engine on a local
 * socket (its paths are this machine's). Remote engines (TLS, SSH) and Podman get copies.
 */
export function mountsWork(docker: ContainerEngine, dialect: EngineDialect = dockerDialect): boolean {
  return dialect.engine === "docker" && typeof docker.modem?.socketPath === "string";
}

/** The steps of a launch, in order (the pairs run at the same time), logged with their durations. */
export type LaunchStep = "create" | "inspect-and-attach" | "start" | "inspect-and-kill-helper";

/** The value of a settled promise, or its rejection thrown. */
function settledValue<Value>(outcome: PromiseSettledResult<Value>): Value {
  if (outcome.status === "rejected") throw outcome.reason;
  return outcome.value;
}

type LaunchOptions = {
  labels: Record<string, string>;
  deadline: Date;
  imageEnv: string[];
  /** The engine's way of taking the settings (Docker's without one). */
  dialect?: EngineDialect;
  logger?: Logger;
  /** For an allow-list: the session's internal network (see network/network-setup.ts). */
  sessionNetwork?: SessionNetwork;
  /**
   * Abandons the launch between its steps (the container is removed) and rejects with the signal's
   * reason: a warm pool that is drained stops its starts in flight instead of finishing them.
   */
  signal?: AbortSignal;
  /** A command whose exec goes out right after the start, before the kill helper's (process/warm-process.ts). */
  firstCommand?: WarmCommand;
  /**
   * Host files to bind-mount read-only at their /workspace/data path (only where `mountsWork`): each
   * is checked first (a file refused there is left out, for the caller to copy), and read back
   * inside the started container before the launch returns.
   */
  mountFiles?: readonly FileToPlace[];
  /** Told the moment the container has started, before its read-back (a prelaunch's worker reports it). */
  onStarted?: (containerId: string) => void;
  /** Tests only: runs between the files' check and the container's creation (a race test swaps a file here). */
  afterMountCheck?: () => Promise<void>;
};

/**
 * Creates, attaches, starts and verifies one sandbox container. Anything that fails after creation
 * removes the container before the error leaves. The deadline is absolute: the container's PID 1
 * (init.ts) is given the seconds left.
 */
export async function launchContainer(
  docker: ContainerEngine,
  config: SandboxConfig,
  options: LaunchOptions,
): Promise<LaunchedContainer> {
  const launched = await launch(docker, config, options, { withKillHelper: true });
  if (!launched.helper) throw new Error("unreachable: a launch with its kill helper returned none");
  return { ...launched, helper: launched.helper };
}

/**
 * A launch for a prelaunch worker: the same steps and read-backs, without the kill helper (an exec
 * stream belongs to the thread that opened it: the thread that takes the container over starts one).
 */
export function launchForHandover(
  docker: ContainerEngine,
  config: SandboxConfig,
  options: LaunchOptions,
): Promise<Omit<LaunchedContainer, "helper">> {
  return launch(docker, config, options, { withKillHelper: false });
}

async function launch(
  docker: ContainerEngine,
  config: SandboxConfig,
  options: LaunchOptions,
  parts: { withKillHelper: boolean },
): Promise<Omit<LaunchedContainer, "helper"> & { helper: KillHelper | undefined }> {
  const secondsLeft = Math.floor((options.deadline.getTime() - Date.now()) / 1000);
  if (secondsLeft < 1) {
    throw new SandboxError(
      `The session passed its deadline (${options.deadline.toISOString()}); create a new session.`,
      { code: "session-expired" },
    );
  }
  const { mounts, refusals } = await checkedMounts(options.mountFiles ?? [], options.logger);
  try {
    await options.afterMountCheck?.();
    const started = { ...options, ...parts };
    let used = mounts;
    const launched = await createAndStart(docker, config, { ...started, mounts }, secondsLeft).catch(
      (error: unknown) => {
        // An engine that cannot bind the path (Docker Desktop outside its shared folders), or an image
        // that cannot list the mounts to verify them: a container without them, the files copied.
        if (mounts.length === 0 || !(refusedMounts(error) || mountsUnverifiable(error))) throw error;
        options.logger?.debug({ error: String(error) }, "the engine refused the data files' mounts: copied");
        used = [];
        return createAndStart(docker, config, { ...started, mounts: [] }, secondsLeft);
      },
    );
    const mounted = used.map(({ containerPath, bytes, hostPath, source }) => ({
      containerPath,
      bytes,
      hostPath,
      source,
      how: "mounted" as const,
    }));
    for (const file of mounted) options.logger?.debug({ file: file.hostPath }, "data file mounted read-only");
    return {
      ...launched,
      ...(mounted.length > 0 ? { mounted } : {}),
      ...(refusals.length > 0 ? { mountRefusals: refusals } : {}),
    };
  } finally {
    await releaseMounts(mounts);
  }
}

/** An engine's refusal of a bind (its HTTP status, a message about the mount), not our own check's. */
function refusedMounts(error: unknown): boolean {
  const { statusCode, message } = error as { statusCode?: unknown; message?: unknown };
  return typeof statusCode === "number" && /mount|bind/i.test(String(message));
}

/** The files that pass the mount check; each refused one is logged (and copied later by the caller). */
async function checkedMounts(
  files: readonly FileToPlace[],
  logger: Logger | undefined,
): Promise<{ mounts: CheckedMount[]; refusals: MountRefusalNote[] }> {
  const { mounts, refused } = await checkMounts(files);
  const refusals = refused.map(({ hostPath, reason }) => ({ hostPath, reason }));
  for (const { hostPath, reason } of refusals)
    logger?.debug({ file: hostPath, reason }, "data file copied: a mount was refused");
  return { mounts, refusals };
}

/** The container created with its checked mounts, started and verified (with its step durations logged). */
async function createAndStart(
  docker: ContainerEngine,
  config: SandboxConfig,
  options: LaunchOptions & { withKillHelper: boolean; mounts: CheckedMount[] },
  secondsLeft: number,
): Promise<Omit<LaunchedContainer, "helper"> & { helper: KillHelper | undefined }> {
  const spec = applySessionNetwork(
    buildContainerSpec(config, {
      labels: options.labels,
      deadlineSeconds: secondsLeft,
      ...(options.dialect ? { dialect: options.dialect } : {}),
      mounts: options.mounts.map(bindOf),
    }),
    options.sessionNetwork,
  );
  let stepStarted = performance.now();
  const stepsMs: Partial<Record<LaunchStep, number>> = {};
  const stepEnded = (step: LaunchStep) => {
    const now = performance.now();
    stepsMs[step] = Math.round((now - stepStarted) * 10) / 10;
    stepStarted = now;
  };
  const container = await docker.createContainer(spec);
  stepEnded("create");
  if (options.signal?.aborted) {
    await removeContainer(container).catch(() => undefined);
    throw options.signal.reason;
  }
  const launched = await startVerified(container, config, options, stepEnded);
  options.logger?.debug(
    { containerId: launched.containerId.slice(0, 12), stepsMs },
    "sandbox container started",
  );
  return launched;
}

/**
 * The created container's read-back (with the lifeline's attach), its start, and the read-back after
 * start (with the kill helper's exec). Removes the container if anything fails.
 */
async function startVerified(
  container: EngineContainer,
  config: SandboxConfig,
  options: LaunchOptions & { withKillHelper: boolean; mounts: CheckedMount[] },
  stepEnded: (step: LaunchStep) => void,
): Promise<Omit<LaunchedContainer, "helper"> & { helper: KillHelper | undefined }> {
  const verifyOptions = {
    imageEnv: options.imageEnv,
    ...(options.sessionNetwork ? { sessionNetwork: options.sessionNetwork } : {}),
    ...(options.dialect ? { dialect: options.dialect } : {}),
    mounts: options.mounts.map(bindOf),
  };
  let lifeline: NodeJS.ReadWriteStream | undefined;
  try {
    // Verify before start: nothing runs until every flag is known to have taken. The lifeline's
    // attach goes out at the same time (it starts nothing).
    const [created, attached] = await Promise.allSettled([
      container.inspect(),
      attachLifeline(container).then((attachment) => (lifeline = attachment)),
    ]);
    verifyContainerSpec(settledValue(created), config, verifyOptions);
    const attachedLifeline = settledValue(attached);
    stepEnded("inspect-and-attach");
    options.signal?.throwIfAborted();
    await container.start();
    stepEnded("start");
    options.signal?.throwIfAborted();
    options.onStarted?.(container.id);
    const guardExecs = execsNeedGuard(config);
    const { helper, warm } = await verifyRunning(container, config, {
      ...verifyOptions,
      withKillHelper: options.withKillHelper,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.firstCommand
        ? { firstCommand: { command: options.firstCommand, cwd: config.workdir, guard: guardExecs } }
        : {}),
    });
    // Before any program: each mount is the file that was checked (no link swapped in since).
    await verifyMounts(container, options.mounts, {
      guard: guardExecs,
      compareInode: showsHostInodes(config),
    });
    stepEnded("inspect-and-kill-helper");
    return {
      container,
      containerId: container.id,
      lifeline: attachedLifeline,
      helper,
      guardExecs,
      ...(warm ? { warm } : {}),
    };
  } catch (error) {
    await teardownContainer({ container, lifeline }).catch(() => undefined);
    throw error;
  }
}

/** The engine's view of a checked mount: its real host path at its path inside. */
function bindOf(mount: CheckedMount): BindMount {
  return { source: mount.source, target: mount.containerPath };
}

/** Whether the runtime shows a mounted file's host device and inode (runc does; gVisor numbers its own). */
function showsHostInodes(config: SandboxConfig): boolean {
  const runtime = runtimeFor(config);
  return runtime === undefined || runtime === "runc";
}

/**
 * The read-back of a started container (every flag again, and running) with, at the same time, the
 * kill helper's exec: the helper is our own script, and no program runs before both are done (the
 * session waits for `helper.ready`). Closes the helper if the read-back fails. Also how a container
 * started in another thread (prelaunch) is taken over: read back here, in the thread that runs it.
 */
export async function verifyRunning(
  container: EngineContainer,
  config: SandboxConfig,
  options: {
    imageEnv: string[];
    sessionNetwork?: SessionNetwork;
    /** The host files mounted read-only: exactly these mounts, no other. */
    mounts?: readonly BindMount[];
    /** Podman: flags its inspect does not show are read from inside (engine/podman-read-back.ts). */
    dialect?: EngineDialect;
    withKillHelper: boolean;
    logger?: Logger;
    /** Started first, then the kill helper (process/warm-process.ts); never where flags are read from inside. */
    firstCommand?: { command: WarmCommand; cwd: string; guard: boolean };
  },
): Promise<{ helper: KillHelper | undefined; info: ContainerInspectInfo; warm?: WarmProcess }> {
  const { withKillHelper, logger, firstCommand: wanted, ...verifyOptions } = options;
  const helperLogger = logger?.child({ containerId: container.id.slice(0, 12) });
  const readsBackInside = options.dialect !== undefined && waysOf(options.dialect).readsBackInside;
  let helper: KillHelper | undefined;
  let warm: WarmProcess | undefined;
  // The engine runs one exec of a container at a time: the first command's goes out first.
  const first =
    wanted && !readsBackInside
      ? WarmProcess.start(container, wanted.command, wanted).then((started) => (warm = started))
      : undefined;
  const startHelper = () =>
    KillHelper.start(container, helperLogger ? { logger: helperLogger } : {}).then(
      (started) => (helper = started),
    );
  const [inspected, helping, firstStarted] = await Promise.allSettled([
    container.inspect(),
    withKillHelper ? (first ? first.then(startHelper, startHelper) : startHelper()) : undefined,
    first,
  ]);
  try {
    const started = settledValue(inspected);
    verifyContainerSpec(started, config, verifyOptions);
    if (!started.State.Running) {
      throw new SandboxError(
        `The sandbox container stopped right after it started (${started.State.Status}).`,
        { code: "container-start" },
      );
    }
    const startedHelper = settledValue(helping);
    settledValue(firstStarted);
    if (readsBackInside) {
      const problems = await readBackInside(container);
      if (problems.length > 0) throw new SecurityFlagError({ problems, containerId: container.id });
    }
    return { helper: startedHelper, info: started, ...(warm ? { warm } : {}) };
  } catch (error) {
    helper?.close();
    warm?.close();
    throw error;
  }
}
