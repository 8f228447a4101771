// One command run in a session's container: start it (once more in a fresh container when the old
// one stopped under it), wait for its end, a timeout or the container stopping, kill what it left,
// read how it ended, and replace the container when a process survived or the container stopped.
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { execMarkerName, type SandboxConfig } from "../config.ts";
import type { LaunchedContainer } from "../container/launch.ts";
import type { EngineContainer, EngineExec } from "../engine/container-engine.ts";
import { destroyStream, statusCodeOf } from "../engine/engine-operations.ts";
import { type ExecResult, startExec, waitForExecExit } from "./exec.ts";
import { type CapturedOutput, captureOutput } from "./exec-connection.ts";

/** Options of `session.execute()`: a timeout, an output cap, environment and working folder for one command. */
export type ExecuteOptions = {
  /** Seconds; defaults to the config's `timeout`. */
  timeout?: number;
  /** Per stream; defaults to the config's `maxOutputBytes` (1 MiB). */
  maxOutputBytes?: number;
  env?: Record<string, string>;
  cwd?: string;
};

/** What a command run (and a file operation) needs of its session. */
export type SessionHost = {
  readonly config: SandboxConfig;
  readonly logger: Logger | undefined;
  /** The container commands run in now (it changes when the session recycles). */
  launched(): LaunchedContainer;
  /** Throws when the session was destroyed; waits for a recycle under way. */
  ready(): Promise<void>;
  /** Waits for the container's kill helper; throws when it did not start. */
  helperReady(launched: LaunchedContainer): Promise<void>;
  isRunning(): Promise<boolean>;
  killMarked(id: string): Promise<{ killed: number; survivors: number }>;
  /** Replaces the container with a fresh one: /workspace starts empty. */
  recycle(reason: string): Promise<void>;
};

/** How the wait for a command ended: its output ended, its time ran out, or its container stopped. */
type Ending = {
  outcome: "ended" | "timeout" | "stopped";
  timedOut: boolean;
  survivors: number;
  durationMs: number;
};

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Polls the container while a command runs; `stopped` resolves if it stops (or disappears). */
function watchStopped(container: EngineContainer): { stopped: Promise<"stopped">; cancel: () => void } {
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<"stopped">((resolve) => {
    const check = async () => {
      if (cancelled) return;
      const running = await container.inspect().then(
        (info) => info.State.Running === true,
        (error: unknown) => statusCodeOf(error) !== 404,
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

function appendLine(text: string, line: string): string {
  if (text.length === 0) return line;
  return text.endsWith("\n") ? `${text}${line}` : `${text}\n${line}`;
}

/** Runs argv (no shell) in the session's container. Failures, timeouts and memory kills are results. */
export async function runCommand(
  host: SessionHost,
  argv: string[],
  options: ExecuteOptions,
): Promise<ExecResult> {
  await host.ready();
  let workspaceReset = false;
  if (!(await host.isRunning())) {
    await host.recycle("the container was not running");
    workspaceReset = true;
  }
  const launched = host.launched();
  await host.helperReady(launched);
  const id = randomUUID();
  const oomBefore = await launched.helper.oomKillCount().catch(() => undefined);
  const startedAt = performance.now();
  let started: Awaited<ReturnType<typeof startExec>>;
  try {
    started = await startExec(launched.container, {
      argv,
      env: { ...options.env, [execMarkerName]: id },
      cwd: options.cwd ?? host.config.workdir,
      stdin: false,
      guard: launched.guardExecs,
    });
  } catch (error) {
    // 409: the container stopped between the check and the exec. The command never ran, so it
    // runs once in a replacement container.
    if (statusCodeOf(error) !== 409 || workspaceReset) throw error;
    await host.recycle("the container stopped before the command started");
    const retried = await runCommand(host, argv, options);
    return { ...retried, workspaceReset: true };
  }
  const limit = options.maxOutputBytes ?? host.config.maxOutputBytes;
  const output = captureOutput(started.stream, { stdout: limit, stderr: limit });
  const timeoutSeconds = options.timeout ?? host.config.timeout;
  const ending = await awaitEnding(host, { id, launched, ended: output.ended, timeoutSeconds, startedAt });
  destroyStream(started.stream);
  const state = await exitState(host, { launched, exec: started.exec, ending, oomBefore });
  return finishRun(host, { output, ending, state, timeoutSeconds, workspaceReset });
}

/**
 * Waits for the command's output to end, its time to run out or its container to stop; then kills
 * what it started (a survivor is a process the kill could not end). gVisor ends the whole sandbox on
 * a memory overrun, and the engine then never ends the exec stream: the container is watched too.
 */
async function awaitEnding(
  host: SessionHost,
  run: {
    id: string;
    launched: LaunchedContainer;
    ended: Promise<"ended">;
    timeoutSeconds: number;
    startedAt: number;
  },
): Promise<Ending> {
  const watcher = watchStopped(run.launched.container);
  try {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), run.timeoutSeconds * 1000);
    });
    let outcome = await Promise.race([run.ended, timeout, watcher.stopped]);
    clearTimeout(timer);
    let durationMs = Math.round(performance.now() - run.startedAt);
    const timedOut = outcome === "timeout";
    let survivors = 0;
    if (outcome !== "stopped") {
      try {
        const result = await Promise.race([host.killMarked(run.id), watcher.stopped]);
        if (result === "stopped") outcome = "stopped";
        else survivors = result.survivors;
        if (timedOut) host.logger?.debug({ killed: result, survivors }, "command timed out");
      } catch (error) {
        host.logger?.warn({ error }, "could not kill the command's processes");
        survivors = 1;
      }
    }
    if (timedOut && outcome !== "stopped") {
      const closed = await Promise.race([
        run.ended,
        watcher.stopped,
        delay(3000).then(() => "late" as const),
      ]);
      if (closed === "stopped") outcome = "stopped";
      else if (closed === "late") survivors = Math.max(survivors, 1);
      durationMs = Math.round(performance.now() - run.startedAt);
    }
    return { outcome, timedOut, survivors, durationMs };
  } finally {
    watcher.cancel();
  }
}

type ExitState = { running: boolean; exitCode: number; oomKilled: boolean };

/** The exit code and whether the memory limit killed something: from the exec and the helper's OOM count, or from the stopped container. */
async function exitState(
  host: SessionHost,
  run: { launched: LaunchedContainer; exec: EngineExec; ending: Ending; oomBefore: number | undefined },
): Promise<ExitState> {
  const { timedOut } = run.ending;
  const running = run.ending.outcome !== "stopped" && (await host.isRunning());
  if (running) {
    const exitCode = timedOut ? -1 : await waitForExecExit(run.exec).catch(() => -1);
    const oomAfter = await run.launched.helper.oomKillCount().catch(() => null);
    // gVisor kills the whole sandbox at its memory limit: the exec can end (with 128) and the kill
    // helper be gone while the container is still stopping. A helper gone is looked at again.
    if (oomAfter !== null || !(await stopsSoon(run.launched.container))) {
      // Without the cgroup's counter, a SIGKILL (137) is taken for the memory limit's only under
      // runc: gVisor's limit stops the whole sandbox (the path below), so a running gVisor
      // container's 137 is a kill (the program's own `kill -9 -1`), never the memory limit.
      const oomKilled =
        run.oomBefore !== undefined && oomAfter != null
          ? oomAfter > run.oomBefore
          : exitCode === 137 && !timedOut && host.config.backend !== "gvisor";
      return { running, exitCode, oomKilled };
    }
  }
  const state = await run.launched.container.inspect().catch(() => undefined);
  const oomKilled = state?.State.OOMKilled === true;
  return { running: false, exitCode: oomKilled && !timedOut ? 137 : -1, oomKilled };
}

/** Whether the container stops within two seconds (polled; a removed container counts as stopped). */
async function stopsSoon(container: EngineContainer): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const info = await container.inspect().catch(() => undefined);
    if (info?.State.Running !== true) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** The result: notes appended to stderr, and a fresh container when a process survived or the container stopped. */
async function finishRun(
  host: SessionHost,
  run: {
    output: CapturedOutput;
    ending: Ending;
    state: ExitState;
    timeoutSeconds: number;
    workspaceReset: boolean;
  },
): Promise<ExecResult> {
  const { output, ending, state } = run;
  let workspaceReset = run.workspaceReset;
  let stderrText = output.stderr.contents().toString("utf8");
  if (ending.timedOut) {
    stderrText = appendLine(
      stderrText,
      `Command timed out after ${run.timeoutSeconds} seconds; its processes were killed`,
    );
  }
  if (ending.survivors > 0 || !state.running) {
    await host.recycle(state.running ? "a process survived the kill" : "the container stopped");
    workspaceReset = true;
    stderrText = appendLine(
      stderrText,
      state.running
        ? "A process survived the kill: the sandbox container was replaced and /workspace is empty again"
        : `The sandbox container stopped${state.oomKilled ? " (out of memory)" : ""}: it was replaced and /workspace is empty again`,
    );
  }
  return {
    exitCode: ending.timedOut ? -1 : state.exitCode,
    stdout: output.stdout.contents().toString("utf8"),
    stderr: stderrText,
    timedOut: ending.timedOut,
    oomKilled: state.oomKilled,
    truncated: output.stdout.truncated || output.stderr.truncated,
    stdoutBytes: output.stdout.seen,
    // What the stream produced, plus any note appended to it above.
    stderrBytes: output.stderr.seen + Buffer.byteLength(stderrText) - output.stderr.contents().length,
    durationMs: ending.durationMs,
    ...(workspaceReset ? { workspaceReset } : {}),
  };
}
