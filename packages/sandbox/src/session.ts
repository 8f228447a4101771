import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { execMarkerName, type SandboxConfig } from "./config.ts";
import type { LaunchedContainer } from "./container/launch.ts";
import type { ContainerInspectInfo, EngineExec } from "./engine/container-engine.ts";
import { destroyStream, teardownContainer } from "./engine/engine-operations.ts";
import { PackageRefusedError } from "./errors/package-refused-error.ts";
import { SandboxError } from "./errors/sandbox-error.ts";
import { type FileEntry, listSandboxFiles, readSandboxFile, writeSandboxFile } from "./files/file-access.ts";
import type { PlacedFile, PlacingProgress } from "./files/place-files.ts";
import { ContainerPlacements } from "./files/placement-record.ts";
import { type ExecResult, type SpawnedProcess, startExec } from "./process/exec.ts";
import { createProcessPipes, ExecConnection } from "./process/exec-connection.ts";
import { KillHelper } from "./process/kill-helper.ts";
import { type ExecuteOptions, runCommand, type SessionHost } from "./process/run-command.ts";
import { WarmProcess } from "./process/warm-process.ts";

/** What the manager hands a session: how to start a replacement container, and who to tell when it ends. */
export type SessionInternals = {
  config: SandboxConfig;
  launched: LaunchedContainer;
  relaunch: () => Promise<LaunchedContainer>;
  onDestroyed: (session: SandboxSession) => void;
  logger?: Logger;
};

/** `name`, `name[extra]`, `name==1.2`, `name>=1,<2`: one PEP 508-style specifier, no URLs, no options. */
const packageSpecification =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?(?:(?:===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+(?:,(?:===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+)*)?$/;

/**
 * One sandbox container and the operations on it. Created by SandboxManager.createSession; every
 * container a session runs in was verified flag by flag before any code ran.
 */
export class SandboxSession {
  readonly config: SandboxConfig;
  private launched: LaunchedContainer;
  /** The host files placed in the current container (a new container starts with none). */
  private placements: ContainerPlacements;
  private readonly internals: SessionInternals;
  private logger: Logger | undefined;
  private destroyed = false;
  private recycling: Promise<void> | undefined;
  /** Spawned processes' exec connections still open (gVisor does not always end them). */
  private readonly openSpawns = new Set<ExecConnection>();
  /** What command runs and file operations use of this session (process/run-command.ts, files/file-access.ts). */
  private readonly host: SessionHost;
  /** The process its first container started with or kept warm, until `takeWarm()` hands it out. */
  private warm: WarmProcess | undefined;

  constructor(internals: SessionInternals) {
    this.internals = internals;
    this.config = internals.config;
    this.launched = internals.launched;
    this.warm = internals.launched.warm;
    this.placements = new ContainerPlacements(internals.launched);
    this.logger = internals.logger?.child({ containerId: internals.launched.containerId.slice(0, 12) });
    const session = this;
    this.host = {
      config: this.config,
      get logger() {
        return session.logger;
      },
      launched: () => this.launched,
      ready: async () => {
        this.assertUsable();
        await this.recycling;
      },
      helperReady: (launched) => this.helperReady(launched),
      isRunning: () => this.isRunning(),
      killMarked: (id) => this.killMarked(id),
      recycle: (reason) => this.recycle(reason),
    };
  }

  /** The current container's id (it changes when the session recycles its container). */
  get containerId(): string {
    return this.launched.containerId;
  }

  private assertUsable(): void {
    if (this.destroyed) {
      throw new SandboxError("This sandbox session was destroyed; create a new one.", {
        code: "session-destroyed",
      });
    }
  }

  /** Runs a shell command (`/bin/sh -c`). Failures, timeouts and memory kills are results. */
  async execute(command: string, options: ExecuteOptions = {}): Promise<ExecResult> {
    return runCommand(this.host, ["/bin/sh", "-c", command], options);
  }

  /**
   * Waits until the container's kill helper runs: no command starts (and no spawned process gets its
   * stdin) before the container can be cleaned up after it.
   */
  private async helperReady(launched: LaunchedContainer): Promise<void> {
    try {
      await launched.helper.ready;
    } catch (error) {
      throw new SandboxError(
        `The sandbox container's kill helper did not start (${(error as Error).message}), so no command may run in it; create a new session.`,
        { code: "kill-helper", cause: error },
      );
    }
  }

  private async isRunning(): Promise<boolean> {
    try {
      const info = await this.launched.container.inspect();
      return info.State.Running === true;
    } catch {
      return false;
    }
  }

  /**
   * Kills the processes marked with `id`, through the helper, or a fresh helper when the code killed
   * it. A container that stopped has no survivors (the caller sees it stopped and recycles).
   */
  private async killMarked(id: string): Promise<{ killed: number; survivors: number }> {
    const launched = this.launched;
    if (launched.helper.alive) {
      try {
        return await launched.helper.killMarked(id);
      } catch (error) {
        this.logger?.debug({ error }, "kill helper failed");
      }
    }
    if (!(await this.isRunning())) return { killed: 0, survivors: 0 };
    launched.helper.close();
    launched.helper = await KillHelper.start(launched.container, this.logger ? { logger: this.logger } : {});
    return launched.helper.killMarked(id);
  }

  /** Replaces the container with a fresh one (same settings, same deadline). /workspace starts empty. */
  private async recycle(reason: string): Promise<void> {
    if (this.recycling) return this.recycling;
    this.recycling = (async () => {
      const old = this.launched;
      this.logger?.warn({ reason }, "recycling the sandbox container");
      await teardownContainer(old).catch(() => undefined);
      this.launched = await this.internals.relaunch();
      this.placements = new ContainerPlacements(this.launched);
      this.logger = this.internals.logger?.child({ containerId: this.launched.containerId.slice(0, 12) });
    })();
    try {
      await this.recycling;
    } finally {
      this.recycling = undefined;
    }
  }

  /**
   * Starts `argv` (no shell) as one exec with stdin attached. Output is not capped here: the
   * consumer reads stdout and stderr (Buffers) and caps them.
   */
  spawn(argv: string[], options: { env?: Record<string, string>; cwd?: string } = {}): SpawnedProcess {
    const pipes = createProcessPipes();
    const id = randomUUID();
    return this.spawnedProcess(this.connectSpawned(argv, options, { id, pipes }), pipes, id);
  }

  /** The SpawnedProcess of a connection on its way (`launching`), its kill marked `id`. */
  private spawnedProcess(
    launching: Promise<ExecConnection>,
    pipes: ReturnType<typeof createProcessPipes>,
    id: string,
  ): SpawnedProcess {
    const started = launching.then(() => undefined);
    const exit = launching.then((connection) =>
      connection.exit().finally(() => this.openSpawns.delete(connection)),
    );
    launching.catch((error: unknown) => {
      pipes.stdout.destroy(error as Error);
      pipes.stderr.destroy(error as Error);
    });
    started.catch(() => undefined);
    exit.catch(() => undefined);
    return {
      ...pipes,
      exit,
      started,
      kill: async () => {
        await started.catch(() => undefined);
        await this.killMarked(id);
      },
    };
  }

  /** Starts a spawned process's exec and connects it once the kill helper is ready. */
  private async connectSpawned(
    argv: string[],
    options: { env?: Record<string, string>; cwd?: string },
    process: { id: string; pipes: ReturnType<typeof createProcessPipes> },
  ): Promise<ExecConnection> {
    this.assertUsable();
    await this.recycling;
    const launched = this.launched;
    // The exec starts while the kill helper may still be starting; its stdin (the program, for the
    // bridge relay) is held back until the helper is ready.
    const started = await startExec(launched.container, {
      argv,
      env: { ...options.env, [execMarkerName]: process.id },
      cwd: options.cwd ?? this.config.workdir,
      stdin: true,
      guard: launched.guardExecs,
    });
    return this.connectStarted(launched, started, process.pipes);
  }

  /** Connects a started exec to its pipes once the kill helper is ready (its stdin held back till then). */
  private async connectStarted(
    launched: LaunchedContainer,
    started: { exec: EngineExec; stream: NodeJS.ReadWriteStream },
    pipes: ReturnType<typeof createProcessPipes>,
  ): Promise<ExecConnection> {
    const connection = new ExecConnection(started, pipes, {
      onError: (error) => this.logger?.debug({ error }, "spawned process stream error"),
    });
    try {
      this.assertUsable();
      await this.helperReady(launched);
    } catch (error) {
      destroyStream(started.stream);
      throw error;
    }
    connection.connect();
    this.openSpawns.add(connection);
    return connection;
  }

  /**
   * Writes a file from inside the container (works on the read-only root): the bytes stream through
   * an exec's stdin into a temporary name in the same folder, which is then renamed into place.
   * Missing folders are created. Paths are confined to /workspace and /tmp.
   */
  writeFile(path: string, content: string | Uint8Array): Promise<void> {
    return writeSandboxFile(this.host, path, content);
  }

  /** Reads a file (binary-safe), at most `maxBytes` (default 10 MiB); `truncated` says whether there was more. */
  readFile(
    path: string,
    options: { maxBytes?: number } = {},
  ): Promise<{ content: Buffer; truncated: boolean }> {
    return readSandboxFile(this.host, path, options);
  }

  /** The entries of one folder (not recursive), sorted by name. */
  listFiles(directory?: string): Promise<FileEntry[]> {
    return listSandboxFiles(this.host, directory);
  }

  /**
   * Installs a Python package into /workspace/.packages (on PYTHONPATH) with pip. Needs a network:
   * with `network: "none"` it returns a failed result that says so, without trying.
   */
  async installPackage(name: string, options: { tool?: "python" } = {}): Promise<ExecResult> {
    const tool = options.tool ?? "python";
    if (tool !== "python") {
      throw new PackageRefusedError({
        packageName: name,
        reason: `the tool ${JSON.stringify(tool)} is not supported`,
      });
    }
    if (typeof name !== "string" || !packageSpecification.test(name.trim())) {
      throw new PackageRefusedError({
        packageName: String(name),
        reason: "it is not a package specification",
      });
    }
    if (this.config.network === "none") {
      return {
        exitCode: 1,
        stdout: "",
        stderr: `Cannot install ${name.trim()}: the sandbox has no network (network: 'none'), so pip cannot download anything. Build an image with the package baked in and set \`image\`, or let the sandbox reach the package index through the egress proxy with network: 'restricted' (PyPI) or { allow: [...] }.`,
        timedOut: false,
        oomKilled: false,
        truncated: false,
        durationMs: 0,
      };
    }
    return runCommand(
      this.host,
      [
        "python3",
        "-m",
        "pip",
        "install",
        "--no-input",
        "--disable-pip-version-check",
        "--no-cache-dir",
        "--target",
        "/workspace/.packages",
        "--",
        name.trim(),
      ],
      {},
    );
  }

  /**
   * The process already running in this container, handed out once (later calls: undefined): the
   * manager's `warmCommand` in a container from the warm pool or a warm prelaunch, or the `command`
   * this session was created with (process/warm-process.ts). A session created without one has none,
   * and one that ended while it waited is not handed out. The caller claims it (its stdin flows once
   * the kill helper is ready) or closes it; one never taken ends with the container.
   */
  takeWarm(): WarmProcess | undefined {
    const warm = this.warm;
    this.warm = undefined;
    if (!warm?.alive) {
      warm?.close();
      return undefined;
    }
    const launched = this.launched;
    return WarmProcess.handOut(warm, {
      ready: async () => {
        this.assertUsable();
        await this.helperReady(launched);
      },
      killMarked: (id) => this.killMarked(id),
      keep: (connection) => this.openSpawns.add(connection),
      release: (connection) => this.openSpawns.delete(connection),
    });
  }

  /** Whether nothing waits to be handed out, or what waits is still running (the pool hands out only such). */
  protected get warmUsable(): boolean {
    return this.warm === undefined || this.warm.alive;
  }

  /**
   * Places host files read-only in the container, each at /workspace/data/<its name>
   * (`placedFilePath`), the folder sealed (0555) after: streamed through an exec's stdin, the root
   * file system stays read-only. Idempotent: a file already there (placed by a prelaunch's worker,
   * which this waits for, or by an earlier call; same place, same size) is not copied again, and
   * `onProgress` hears it once at its full size; for the others every 4 MiB and at each file's end.
   * Rejects with a FilePlacementError (`noSpace` for a full /workspace: raise `diskLimit`).
   */
  placeFiles(
    hostPaths: readonly string[],
    options: { onProgress?: (progress: PlacingProgress) => void } = {},
  ): Promise<PlacedFile[]> {
    return this.placements.place(hostPaths, {
      ...options,
      before: async () => {
        await this.host.ready();
        await this.helperReady(this.launched);
      },
    });
  }

  /**
   * The files placed in this container so far: a prelaunch's (its worker hands the container over
   * first and places them meanwhile; this waits for it; those placed before a failure such as a
   * full /workspace only), then those of `placeFiles`. None in a new container.
   */
  async filesPlaced(): Promise<readonly PlacedFile[]> {
    return this.placements.list();
  }

  /** `docker inspect` of the current container. */
  inspect(): Promise<ContainerInspectInfo> {
    return this.launched.container.inspect();
  }

  /** Removes the container. Idempotent; a container that is already gone counts as removed. */
  async close(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.recycling?.catch(() => undefined);
    try {
      await teardownContainer(this.launched);
    } finally {
      for (const connection of this.openSpawns) connection.close();
      this.openSpawns.clear();
      this.internals.onDestroyed(this);
    }
  }

  /** @deprecated Use {@link SandboxSession.close}: the same call under the one disposal name. */
  destroy(): Promise<void> {
    return this.close();
  }

  /** `await using session = ...`: closes the session, unless the settings say `persistent: true`. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.config.persistent) return;
    await this.close();
  }
}
