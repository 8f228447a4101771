import type { EngineContainer, EngineExec } from "../engine/container-engine.ts";
import { guardedArgv } from "./syscall-guard.ts";

/** What a command returned. Failures of the command are results, not exceptions. */
export type ExecResult = {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  oomKilled: boolean;
  truncated: boolean;
  /** How many bytes each stream produced in all, kept or not (the output above is capped). */
  stdoutBytes?: number;
  stderrBytes?: number;
  durationMs: number;
  /** Set when the container had to be replaced (a process survived the kill, or the container died): /workspace is empty again. */
  workspaceReset?: boolean;
};

/** One `docker exec` with stdin attached; the channel core's bridge relay runs over. */
export type SpawnedProcess = {
  /** Writable: ending it closes the process's stdin. */
  stdin: NodeJS.WritableStream;
  /** Demultiplexed, binary-safe (Buffers), not capped. Read both, or the process stalls on backpressure. */
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  /** Resolves after both output streams ended, with the exit code from exec.inspect(). */
  exit: Promise<{ exitCode: number }>;
  /** Resolves once the exec is attached and running. */
  started: Promise<void>;
  /** Kills every process this exec started (a marker kill inside the container). */
  kill(): Promise<void>;
};

export type ExecStartOptions = {
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
  stdin: boolean;
  /** Install the seccomp guard first (syscall-guard.ts): for runtimes that do not filter execs. */
  guard: boolean;
};

/** Creates and starts one exec (Tty false, output attached, stdin only when asked for). */
export async function startExec(
  container: EngineContainer,
  options: ExecStartOptions,
): Promise<{ exec: EngineExec; stream: NodeJS.ReadWriteStream }> {
  const exec = await container.exec({
    Cmd: options.guard ? guardedArgv(options.argv) : options.argv,
    Env: Object.entries(options.env ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(options.cwd ? { WorkingDir: options.cwd } : {}),
    AttachStdin: options.stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({
    hijack: true,
    stdin: options.stdin,
    Tty: false,
  })) as NodeJS.ReadWriteStream;
  // Over TCP (a remote engine): no Nagle delay. Each bridged call is a small frame each way, which
  // Nagle's algorithm with the peer's delayed acknowledgement holds back for about 40 ms.
  (stream as { setNoDelay?: (noDelay: boolean) => unknown }).setNoDelay?.(true);
  return { exec, stream };
}

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** The exit code of a finished exec. The stream can end a moment before the engine records the exit. */
export async function waitForExecExit(
  exec: EngineExec,
  options: { timeoutMs?: number } = {},
): Promise<number> {
  const deadline = Date.now() + (options.timeoutMs ?? 5000);
  for (;;) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null && info.ExitCode !== undefined) return info.ExitCode;
    if (Date.now() > deadline) return -1;
    await delay(20);
  }
}
