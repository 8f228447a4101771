import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import { finished } from "node:stream/promises";
import type Dockerode from "dockerode";
import type { Logger } from "pino";
import { execMarkerName, type SandboxConfig } from "./config.ts";
import { CappedSink, Demultiplexer } from "./demultiplex.ts";
import { removeContainer, statusCodeOf } from "./docker-operations.ts";
import { PackageRefusedError } from "./errors/package-refused-error.ts";
import { PathRefusedError } from "./errors/path-refused-error.ts";
import { SandboxError } from "./errors/sandbox-error.ts";
import { type ExecResult, type SpawnedProcess, startExec, waitForExecExit } from "./exec.ts";
import { KillHelper } from "./kill-helper.ts";
import type { LaunchedContainer } from "./launch.ts";
import { closeLifeline } from "./lifeline.ts";
import { refuseOutsideRootsLine, resolveSandboxPath } from "./paths.ts";

/** Options of `session.execute()`: a timeout, an output cap, environment and working folder for one command. */
export type ExecuteOptions = {
  /** Seconds; defaults to the config's `timeout`. */
  timeout?: number;
  /** Per stream; defaults to the config's `maxOutputBytes` (1 MiB). */
  maxOutputBytes?: number;
  env?: Record<string, string>;
  cwd?: string;
};

/** One entry of `session.listFiles()`. */
export type FileEntry = {
  name: string;
  path: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
};

/** What the manager hands a session: how to start a replacement container, and who to tell when it ends. */
export type SessionInternals = {
  config: SandboxConfig;
  launched: LaunchedContainer;
  relaunch: () => Promise<LaunchedContainer>;
  onDestroyed: (session: SandboxSession) => void;
  logger?: Logger;
};

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** `name`, `name[extra]`, `name==1.2`, `name>=1,<2`: one PEP 508-style specifier, no URLs, no options. */
const packageSpecification =
  /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?(?:(?:===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+(?:,(?:===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+)*)?$/;

/** Polls the container while a command runs; `stopped` resolves if it stops (or disappears). */
function watchStopped(container: Dockerode.Container): { stopped: Promise<"stopped">; cancel: () => void } {
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<"stopped">((resolve) => {
    const check = async () => {
      if (cancelled) return;
      const running = await container.inspect().then(
        (info) => info.State.Running === true,
        (error: { statusCode?: number }) => error.statusCode !== 404,
      );
      if (cancelled) return;
      if (!running) resolve("stopped");
      else timer = setTimeout(check, 500);
    };
    timer = setTimeout(check, 500);
  });
  return {
    stopped,
    cancel: () => {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}

function timeoutNote(seconds: number): string {
  return `Command timed out after ${seconds} seconds; its processes were killed`;
}

function appendLine(text: string, line: string): string {
  if (text.length === 0) return line;
  return text.endsWith("\n") ? `${text}${line}` : `${text}\n${line}`;
}

/**
 * One sandbox container and the operations on it. Created by SandboxManager.createSession; every
 * container a session runs in was verified flag by flag before any code ran.
 */
export class SandboxSession {
  readonly config: SandboxConfig;
  private launched: LaunchedContainer;
  private readonly internals: SessionInternals;
  private logger: Logger | undefined;
  private destroyed = false;
  private recycling: Promise<void> | undefined;
  /** Closers of spawned processes' exec connections still open (gVisor does not always end them). */
  private readonly openSpawns = new Set<() => void>();

  constructor(internals: SessionInternals) {
    this.internals = internals;
    this.config = internals.config;
    this.launched = internals.launched;
    this.logger = internals.logger?.child({ containerId: internals.launched.containerId.slice(0, 12) });
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
    return this.run(["/bin/sh", "-c", command], options);
  }

  private async run(argv: string[], options: ExecuteOptions): Promise<ExecResult> {
    this.assertUsable();
    await this.recycling;
    let workspaceReset = false;
    if (!(await this.isRunning())) {
      await this.recycle("the container was not running");
      workspaceReset = true;
    }
    const launched = this.launched;
    await this.helperReady(launched);
    const timeoutSeconds = options.timeout ?? this.config.timeout;
    const limit = options.maxOutputBytes ?? this.config.maxOutputBytes;
    const id = randomUUID();
    const oomBefore = await launched.helper.oomKillCount().catch(() => undefined);
    const startedAt = performance.now();
    const execOptions = {
      argv,
      env: { ...options.env, [execMarkerName]: id },
      cwd: options.cwd ?? this.config.workdir,
    };
    let started: Awaited<ReturnType<typeof startExec>>;
    try {
      started = await startExec(launched.container, {
        ...execOptions,
        stdin: false,
        guard: launched.guardExecs,
      });
    } catch (error) {
      // 409: the container stopped between the check and the exec. The command never ran, so it
      // runs once in a replacement container.
      if (statusCodeOf(error) !== 409 || workspaceReset) throw error;
      await this.recycle("the container stopped before the command started");
      const retried = await this.run(argv, options);
      return { ...retried, workspaceReset: true };
    }
    const { exec, stream } = started;
    const stdout = new CappedSink(limit);
    const stderr = new CappedSink(limit);
    stream.on("error", () => undefined);
    stream.pipe(new Demultiplexer(stdout, stderr));
    const ended = Promise.all([finished(stdout), finished(stderr)]).then(
      () => "ended" as const,
      () => "ended" as const,
    );
    // gVisor ends the whole sandbox on a memory overrun, and the engine then never ends the exec
    // stream: watch the container too.
    const watcher = watchStopped(launched.container);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutSeconds * 1000);
    });
    let outcome = await Promise.race([ended, timeout, watcher.stopped]);
    clearTimeout(timer);
    let durationMs = Math.round(performance.now() - startedAt);
    const timedOut = outcome === "timeout";
    let survivors = 0;
    if (outcome !== "stopped") {
      try {
        const result = await Promise.race([this.killMarked(id), watcher.stopped]);
        if (result === "stopped") outcome = "stopped";
        else survivors = result.survivors;
        if (timedOut) this.logger?.debug({ killed: result, survivors }, "command timed out");
      } catch (error) {
        this.logger?.warn({ error }, "could not kill the command's processes");
        survivors = 1;
      }
    }
    if (timedOut && outcome !== "stopped") {
      const closed = await Promise.race([ended, watcher.stopped, delay(3000).then(() => "late" as const)]);
      if (closed === "stopped") outcome = "stopped";
      else if (closed === "late") survivors = Math.max(survivors, 1);
      durationMs = Math.round(performance.now() - startedAt);
    }
    watcher.cancel();
    (stream as unknown as { destroy?: () => void }).destroy?.();
    const running = outcome !== "stopped" && (await this.isRunning());
    let exitCode = -1;
    let oomKilled = false;
    if (running) {
      if (!timedOut) exitCode = await waitForExecExit(exec).catch(() => -1);
      const oomAfter = await launched.helper.oomKillCount().catch(() => undefined);
      oomKilled =
        oomBefore !== undefined && oomAfter !== undefined
          ? oomAfter > oomBefore
          : exitCode === 137 && !timedOut;
    } else {
      const state = await launched.container.inspect().catch(() => undefined);
      if (state?.State.OOMKilled) {
        oomKilled = true;
        if (!timedOut) exitCode = 137;
      }
    }
    let stderrText = stderr.contents().toString("utf8");
    if (timedOut) stderrText = appendLine(stderrText, timeoutNote(timeoutSeconds));
    if (survivors > 0 || !running) {
      await this.recycle(running ? "a process survived the kill" : "the container stopped");
      workspaceReset = true;
      stderrText = appendLine(
        stderrText,
        running
          ? "A process survived the kill: the sandbox container was replaced and /workspace is empty again"
          : `The sandbox container stopped${oomKilled ? " (out of memory)" : ""}: it was replaced and /workspace is empty again`,
      );
    }
    return {
      exitCode: timedOut ? -1 : exitCode,
      stdout: stdout.contents().toString("utf8"),
      stderr: stderrText,
      timedOut,
      oomKilled,
      truncated: stdout.truncated || stderr.truncated,
      stdoutBytes: stdout.seen,
      // What the stream produced, plus any note appended to it above.
      stderrBytes: stderr.seen + Buffer.byteLength(stderrText) - stderr.contents().length,
      durationMs,
      ...(workspaceReset ? { workspaceReset } : {}),
    };
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
      old.helper.close();
      closeLifeline(old.lifeline);
      await removeContainer(old.container).catch(() => undefined);
      this.launched = await this.internals.relaunch();
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
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const id = randomUUID();
    const launching = (async () => {
      this.assertUsable();
      await this.recycling;
      const launched = this.launched;
      // The exec starts while the kill helper may still be starting; its stdin (the program, for the
      // bridge relay) is held back until the helper is ready.
      const { exec, stream } = await startExec(launched.container, {
        argv,
        env: { ...options.env, [execMarkerName]: id },
        cwd: options.cwd ?? this.config.workdir,
        stdin: true,
        guard: launched.guardExecs,
      });
      stream.on("error", (error: Error) => {
        this.logger?.debug({ error }, "spawned process stream error");
        stdout.end();
        stderr.end();
      });
      try {
        await this.helperReady(launched);
      } catch (error) {
        (stream as unknown as { destroy?: () => void }).destroy?.();
        throw error;
      }
      stdin.pipe(stream);
      stream.pipe(new Demultiplexer(stdout, stderr));
      const close = () => {
        (stream as unknown as { destroy?: () => void }).destroy?.();
        stdout.end();
        stderr.end();
      };
      this.openSpawns.add(close);
      return { exec, stream, close };
    })();
    const started = launching.then(() => undefined);
    const exit = launching.then(async ({ exec, close }) => {
      await Promise.all([finished(stdout), finished(stderr)]).catch(() => undefined);
      close();
      this.openSpawns.delete(close);
      return { exitCode: await waitForExecExit(exec) };
    });
    launching.catch((error: unknown) => {
      stdout.destroy(error as Error);
      stderr.destroy(error as Error);
    });
    started.catch(() => undefined);
    exit.catch(() => undefined);
    return {
      stdin,
      stdout,
      stderr,
      exit,
      started,
      kill: async () => {
        await started.catch(() => undefined);
        await this.killMarked(id);
      },
    };
  }

  /** Runs argv with optional stdin bytes; a small internal helper for the file operations. */
  private async runWithInput(
    argv: string[],
    options: { input?: Buffer; maxOutputBytes?: number },
  ): Promise<{ exitCode: number; stdout: Buffer; stderr: string; truncated: boolean }> {
    this.assertUsable();
    await this.recycling;
    await this.helperReady(this.launched);
    const id = randomUUID();
    const { exec, stream } = await startExec(this.launched.container, {
      argv,
      env: { [execMarkerName]: id },
      cwd: "/",
      stdin: options.input !== undefined,
      guard: this.launched.guardExecs,
    });
    const stdout = new CappedSink(options.maxOutputBytes ?? this.config.maxOutputBytes);
    const stderr = new CappedSink(64 * 1024);
    stream.on("error", () => undefined);
    stream.pipe(new Demultiplexer(stdout, stderr));
    if (options.input !== undefined) stream.end(options.input);
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      Promise.all([finished(stdout), finished(stderr)]).then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), this.config.timeout * 1000);
      }),
    ]);
    clearTimeout(timer);
    (stream as unknown as { destroy?: () => void }).destroy?.();
    if (!inTime) {
      await this.killMarked(id).catch(() => undefined);
      throw new SandboxError(`The file operation did not finish within ${this.config.timeout} seconds.`, {
        code: "file-timeout",
      });
    }
    const exitCode = await waitForExecExit(exec);
    return {
      exitCode,
      stdout: stdout.contents(),
      stderr: stderr.contents().toString("utf8").trim(),
      truncated: stdout.truncated,
    };
  }

  /**
   * Writes a file from inside the container (works on the read-only root): the bytes stream through
   * an exec's stdin into a temporary name in the same folder, which is then renamed into place.
   * Missing folders are created. Paths are confined to /workspace and /tmp.
   */
  async writeFile(path: string, content: string | Uint8Array): Promise<void> {
    const target = resolveSandboxPath(path, { workdir: this.config.workdir });
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : Buffer.from(content);
    const script = [
      'if [ -d "$1" ]; then echo "$1 is a directory" >&2; exit 1; fi',
      'folder=$(dirname -- "$1")',
      'mkdir -p -- "$folder" || exit 1',
      // A folder on the way may be a link: the real folder must still be under /workspace or /tmp.
      'real=$(realpath -e -- "$folder") || exit 1',
      refuseOutsideRootsLine,
      'temporary="$real/.codeaction-write-$2"',
      'if ! cat > "$temporary"; then rm -f -- "$temporary"; exit 1; fi',
      'mv -f -- "$temporary" "$real/$(basename -- "$1")"',
    ].join("\n");
    const result = await this.runWithInput(
      ["/bin/sh", "-c", script, "codeaction-write", target, randomUUID()],
      {
        input: bytes,
      },
    );
    if (result.exitCode === 3) {
      throw new PathRefusedError({
        path,
        reason: `its folder is a link to ${result.stderr}, outside /workspace and /tmp`,
      });
    }
    if (result.exitCode !== 0) {
      throw new SandboxError(`Could not write ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
        code: "file-write-failed",
      });
    }
  }

  /** Reads a file (binary-safe), at most `maxBytes` (default 10 MiB); `truncated` says whether there was more. */
  async readFile(
    path: string,
    options: { maxBytes?: number } = {},
  ): Promise<{ content: Buffer; truncated: boolean }> {
    const target = resolveSandboxPath(path, { workdir: this.config.workdir });
    const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
    const script = [
      'real=$(realpath -e -- "$1") || exit 2',
      refuseOutsideRootsLine,
      'if [ ! -f "$real" ]; then echo "not a regular file" >&2; exit 4; fi',
      'exec head -c "$2" -- "$real"',
    ].join("\n");
    const result = await this.runWithInput(
      ["/bin/sh", "-c", script, "codeaction-read", target, String(maxBytes + 1)],
      { maxOutputBytes: maxBytes },
    );
    if (result.exitCode === 3) {
      throw new PathRefusedError({
        path,
        reason: `it is a link to ${result.stderr}, outside /workspace and /tmp`,
      });
    }
    if (result.exitCode !== 0) {
      throw new SandboxError(`Could not read ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
        code: result.exitCode === 2 ? "file-not-found" : "file-read-failed",
      });
    }
    return { content: result.stdout, truncated: result.truncated };
  }

  /** The entries of one folder (not recursive), sorted by name. */
  async listFiles(directory?: string): Promise<FileEntry[]> {
    const target = resolveSandboxPath(directory ?? this.config.workdir, { workdir: this.config.workdir });
    const script = [
      'real=$(realpath -e -- "$1") || exit 2',
      refuseOutsideRootsLine,
      'if [ ! -d "$real" ]; then echo "not a folder" >&2; exit 4; fi',
      "exec find \"$real\" -mindepth 1 -maxdepth 1 -printf '%y\\t%s\\t%f\\0'",
    ].join("\n");
    const result = await this.runWithInput(["/bin/sh", "-c", script, "codeaction-list", target], {
      maxOutputBytes: 16 * 1024 * 1024,
    });
    if (result.exitCode === 3) {
      throw new PathRefusedError({
        path: target,
        reason: `it is a link to ${result.stderr}, outside /workspace and /tmp`,
      });
    }
    if (result.exitCode !== 0) {
      throw new SandboxError(`Could not list ${target}: ${result.stderr || `exit ${result.exitCode}`}`, {
        code: result.exitCode === 2 ? "file-not-found" : "file-list-failed",
      });
    }
    const types: Record<string, FileEntry["type"]> = { f: "file", d: "directory", l: "symlink" };
    return result.stdout
      .toString("utf8")
      .split("\0")
      .filter((record) => record.length > 0)
      .map((record) => {
        const [type = "", size = "0", ...nameParts] = record.split("\t");
        const name = nameParts.join("\t");
        return {
          name,
          path: target === "/" ? `/${name}` : `${target}/${name}`,
          type: types[type] ?? "other",
          size: Number(size),
        };
      })
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
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
    return this.run(
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

  /** `docker inspect` of the current container. */
  inspect(): Promise<Dockerode.ContainerInspectInfo> {
    return this.launched.container.inspect();
  }

  /** Removes the container. Idempotent; a container that is already gone counts as removed. */
  async close(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.recycling?.catch(() => undefined);
    const launched = this.launched;
    launched.helper.close();
    closeLifeline(launched.lifeline);
    try {
      await removeContainer(launched.container);
    } finally {
      for (const close of this.openSpawns) close();
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
