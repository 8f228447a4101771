// The options of a SandboxManager and of one createSession call, and their checks.
import type { Logger } from "pino";
import type { ContainerEngine } from "./engine/container-engine.ts";
import { SandboxError } from "./errors/sandbox-error.ts";
import type { SandboxPrelaunch } from "./prelaunch/prelaunch.ts";

/** Options of a `SandboxManager` beyond its sandbox settings: a logger, a Docker client, a warm command for pooled containers. */
export type SandboxManagerOptions = {
  /** pino logger; silent without one. */
  logger?: Logger;
  /** A connected client; without one the manager tries DOCKER_HOST and the usual sockets. */
  docker?: ContainerEngine;
  /**
   * With `pool` > 0: a command (argv) every warm container starts ahead of need, stdin attached and
   * nothing written yet. A pooled session hands it out already running (`session.takeWarm()`, whose
   * `argv` is this very array); `spawn` never takes it.
   * A prelaunched container is made warm the same way, with or without a pool (see `prelaunch`).
   */
  warmCommand?: string[];
  /**
   * Programs the image must have on its PATH ("python3" for code-action): ready() refuses an image
   * without them (a SandboxError with code "image-unsuitable" naming the image and the fix).
   */
  requiredCommands?: string[];
  /**
   * A container already being started in a worker thread with the same settings
   * (`SandboxPrelaunch.start(config)`): it becomes the warm pool's first container, with or without
   * a pool. ready() takes it over at once, in the background, reading every flag back again: its
   * kill helper (and its `warmCommand`) start while the caller does other work (a model call, a data
   * scan), and the first session with the default deadline and labels gets it with nothing left to
   * start. The manager uses the prelaunch's manager id as its own. When it failed or differs, it is
   * removed and the manager starts its own. `close()` closes it. Not used with an allow-list.
   */
  prelaunch?: SandboxPrelaunch;
};

/** Options of one `manager.createSession()` call. */
export type CreateSessionOptions = {
  /** The container ends itself this many seconds after creation, even if this process dies. Default 3600. */
  deadlineSeconds?: number;
  /** Extra container labels (keys under `codeaction.` are reserved). */
  labels?: Record<string, string>;
  /**
   * This session's logger (give it the run id): its commands, and with an allow-list every egress
   * request of its sandbox. Defaults to the manager's. A warm pool container keeps the manager's.
   */
  logger?: Logger;
  /**
   * Stops waiting for a container or a free slot: the request leaves the line at once and
   * createSession rejects with the signal's reason. A container already being started for this
   * request is still started (and removed by the caller, or handed to the next request).
   */
  signal?: AbortSignal;
  /**
   * A command (argv) to start with the container: its exec goes out right after the container's
   * start, ahead of the kill helper's, so its start-up is off the critical path. `session.takeWarm()`
   * hands it out once (claim it, or close it); nothing reaches its stdin before the helper is ready,
   * and one never taken ends with the container. Code-action passes its bridge relay. A container
   * from the warm pool has its own warm command instead, and Podman starts none (its flags are read
   * back inside first). A non-empty array of strings, at most 1 MiB.
   */
  command?: string[];
  /**
   * Host files the caller will place (`session.placeFiles`) that may instead be bind-mounted
   * read-only at their /workspace/data path when the container starts: only on a Docker engine on a
   * local socket, only for a container started for this request (a warm pool's or prelaunch's
   * container already exists: it gets copies), and only for a regular file that passes the mount
   * check (files/mount-files.ts). `placeFiles` then copies only what was not mounted. Files that add
   * up to more than the `poolCopyLimit` setting (default 32M) skip a warm pool: the request starts a
   * container of its own that mounts them.
   */
  mountFiles?: string[];
};

/** The default lifetime of a session's container. */
export const defaultDeadlineSeconds = 3600;

/** The session's deadline in seconds (default 1 h), or a SandboxError when it is under 1. */
export function checkedDeadlineSeconds(options: CreateSessionOptions): number {
  const deadlineSeconds = options.deadlineSeconds ?? defaultDeadlineSeconds;
  if (!(deadlineSeconds >= 1)) {
    throw new SandboxError(`deadlineSeconds must be at least 1, got ${deadlineSeconds}`, {
      code: "invalid-option",
    });
  }
  return deadlineSeconds;
}

/** The caller's own labels; the codeaction.* ones are the sandbox's and are dropped. */
export function callerLabels(options: CreateSessionOptions): Record<string, string> {
  return Object.fromEntries(
    Object.entries(options.labels ?? {}).filter(([key]) => !key.startsWith("codeaction.")),
  );
}
