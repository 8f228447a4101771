// How a manager takes over a container its prelaunch worker started: everything is read back again
// in this thread before the container is handed to a session.

import type { Logger } from "pino";
import { parseSandboxConfig, type SandboxConfig } from "../config.ts";
import { type EngineDialect, waysOf } from "../container/engine-dialect.ts";
import { labelKeys } from "../container/labels.ts";
import { type LaunchedContainer, verifyRunning } from "../container/launch.ts";
import { holdIdentity, type SandboxIdentity } from "../container/user-ids.ts";
import type { ContainerEngine, ContainerInspectInfo } from "../engine/container-engine.ts";
import { teardownContainer } from "../engine/engine-operations.ts";
import { execsNeedGuard } from "../process/syscall-guard.ts";
import { type WarmCommand, WarmProcess } from "../process/warm-process.ts";
import type { SandboxPrelaunch } from "./prelaunch.ts";

/**
 * The prelaunched container as a launched one of this manager, with its uid held here and its kill
 * helper started here; undefined (the container removed, the reason logged) when the worker failed,
 * the uid is taken, or the read-back finds any flag, the image or the manager label not as this
 * manager's settings say. The caller then launches its own.
 *
 * The manager's `warmCommand` starts here, in this thread (an exec stream belongs to the thread that
 * opened it), the moment the worker reports the container started: its start-up (the relay's
 * interpreter and its preimports) overlaps the worker's read-back and this take-over, as a cold
 * container's first command overlaps its own. Like that one, it has nothing to run until the session
 * is handed out, which waits for the read-back; a container that fails it is removed with it.
 */
export async function takeOverPrelaunched(
  docker: ContainerEngine,
  prelaunch: SandboxPrelaunch,
  options: {
    config: SandboxConfig;
    managerId: string;
    imageEnv: string[];
    dialect: EngineDialect;
    logger?: Logger | undefined;
    warmCommand?: WarmCommand | undefined;
  },
): Promise<{ identity: SandboxIdentity; launched: LaunchedContainer } | undefined> {
  const early = startWarmEarly(docker, prelaunch, options);
  const handed = await prelaunch.take();
  if (!handed) {
    options.logger?.debug({ reason: prelaunch.failure }, "prelaunched container not used");
    (await early)?.close();
    return undefined;
  }
  const container = docker.getContainer(handed.containerId);
  for (const { hostPath, reason } of handed.mountRefusals ?? [])
    options.logger?.debug({ file: hostPath, reason }, "data file copied: a mount was refused");
  const identity = holdIdentity(options.config, handed.user);
  try {
    if (!identity) throw new Error(`its user ${handed.user} is not one this manager can hold`);
    const { helper, info } = await verifyRunning(container, identity.config, {
      imageEnv: options.imageEnv,
      dialect: options.dialect,
      // Its mounts, exactly: the files the worker checked and mounted (and read back inside).
      mounts: handed.mounted.map((file) => ({ source: file.source, target: file.containerPath })),
      withKillHelper: true,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    const problem = mismatch(info, options);
    if (problem || !helper) {
      helper?.close();
      throw new Error(problem ?? "no kill helper");
    }
    const warm = await early;
    return {
      identity,
      launched: {
        container,
        containerId: handed.containerId,
        lifeline: handed.lifeline,
        helper,
        guardExecs: execsNeedGuard(identity.config),
        placedFiles: handed.placed,
        ...(handed.mounted.length > 0 ? { mounted: handed.mounted } : {}),
        ...(warm ? { warm } : {}),
      },
    };
  } catch (error) {
    (await early)?.close();
    identity?.release();
    options.logger?.warn({ error: String(error) }, "prelaunched container removed, not used");
    await teardownContainer({ container, lifeline: handed.lifeline }).catch(() => undefined);
    return undefined;
  }
}

/**
 * The warm command started in the prelaunched container as soon as it has started (see above);
 * undefined without one, or when it could not start (the manager then starts it after the take-over).
 */
async function startWarmEarly(
  docker: ContainerEngine,
  prelaunch: SandboxPrelaunch,
  options: {
    config: SandboxConfig;
    dialect: EngineDialect;
    logger?: Logger | undefined;
    warmCommand?: WarmCommand | undefined;
  },
): Promise<WarmProcess | undefined> {
  const { config, logger, warmCommand } = options;
  // Where flags are read from inside (Podman), nothing of ours runs before that read-back; nor in a
  // container started with other settings (another image or network), which the take-over removes.
  if (!warmCommand || waysOf(options.dialect).readsBackInside || !sameSettings(prelaunch, config)) {
    return undefined;
  }
  const containerId = await prelaunch.startedContainer();
  if (containerId === undefined) return undefined;
  try {
    const warm = await WarmProcess.start(docker.getContainer(containerId), warmCommand, {
      cwd: config.workdir,
      guard: execsNeedGuard(config),
    });
    logger?.debug("warm command started at the prelaunched container's start");
    return warm;
  } catch (error) {
    logger?.debug({ error: String(error) }, "warm command not started early");
    return undefined;
  }
}

/**
 * The dialect the prelaunch's worker found when its engine checks passed with the settings this
 * manager has (the warm pool's settings aside, which the checks do not read); undefined otherwise (the
 * manager then makes the checks itself).
 */
export async function prelaunchEngineChecks(
  prelaunch: SandboxPrelaunch | undefined,
  config: SandboxConfig,
): Promise<EngineDialect | undefined> {
  if (!prelaunch || !sameSettings(prelaunch, config)) return undefined;
  return prelaunch.checkedEngine();
}

/** Whether the prelaunch was started with this manager's settings, its warm pool's aside. */
function sameSettings(prelaunch: SandboxPrelaunch, config: SandboxConfig): boolean {
  let prelaunchConfig: SandboxConfig;
  try {
    prelaunchConfig = parseSandboxConfig(prelaunch.config);
  } catch {
    return false;
  }
  const compared = (settings: SandboxConfig) =>
    JSON.stringify({ ...settings, pool: 0, poolIdleSeconds: 0, poolCopyLimit: 0 });
  return compared(prelaunchConfig) === compared(config);
}

/** What the read-back of the flags does not cover: the image and the manager the container is for. */
function mismatch(
  info: ContainerInspectInfo,
  options: { config: SandboxConfig; managerId: string },
): string | undefined {
  if (info.Config.Image !== options.config.image) {
    return `it runs image ${info.Config.Image}, this manager's settings say ${options.config.image}`;
  }
  if (info.Config.Labels?.[labelKeys.managerId] !== options.managerId) {
    return "it is labelled for another manager";
  }
  return undefined;
}
