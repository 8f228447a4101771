import { PassThrough } from "node:stream";
import { finished } from "node:stream/promises";
import type { EngineExec } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { CappedSink, Demultiplexer } from "./demultiplex.ts";
import { waitForExecExit } from "./exec.ts";

/** The three ends a caller holds of a process with stdin attached (the streams of a SpawnedProcess). */
export type ProcessPipes = { stdin: PassThrough; stdout: PassThrough; stderr: PassThrough };

export function createProcessPipes(): ProcessPipes {
  return { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
}

/**
 * A started exec with stdin attached, wired to its pipes: the one place the exec stream of a spawned
 * process (SandboxSession.spawn, a WarmProcess) is connected, closed and waited for.
 * A stream error ends both outputs at once; `connect` starts the flow (a caller may hold it back).
 */
export class ExecConnection {
  private readonly exec: EngineExec;
  private readonly stream: NodeJS.ReadWriteStream;
  private readonly pipes: ProcessPipes;

  constructor(
    started: { exec: EngineExec; stream: NodeJS.ReadWriteStream },
    pipes: ProcessPipes,
    options: { onError?: (error: Error) => void } = {},
  ) {
    this.exec = started.exec;
    this.stream = started.stream;
    this.pipes = pipes;
    this.stream.on("error", (error: Error) => {
      options.onError?.(error);
      pipes.stdout.end();
      pipes.stderr.end();
    });
  }

  /** Stdin flows into the exec; its output, demultiplexed, into stdout and stderr. */
  connect(): void {
    this.connectInput();
    this.connectOutput();
  }

  /** Stdin flows into the exec (a warm process's, at its claim). */
  connectInput(): void {
    this.pipes.stdin.pipe(this.stream);
  }

  /** The exec's output, demultiplexed, flows into stdout and stderr. */
  connectOutput(): void {
    this.stream.pipe(new Demultiplexer(this.pipes.stdout, this.pipes.stderr));
  }

  /** Drops the connection and ends both outputs. Idempotent. */
  close(): void {
    destroyStream(this.stream);
    this.pipes.stdout.end();
    this.pipes.stderr.end();
  }

  /** Resolves once both outputs ended (the connection is then closed) with the exec's exit code. */
  async exit(): Promise<{ exitCode: number }> {
    await Promise.all([finished(this.pipes.stdout), finished(this.pipes.stderr)]).catch(() => undefined);
    this.close();
    return { exitCode: await waitForExecExit(this.exec) };
  }
}

/** A command's output held by the host, each stream capped. `ended` resolves when both ended (or failed). */
export type CapturedOutput = { stdout: CappedSink; stderr: CappedSink; ended: Promise<"ended"> };

/** Demultiplexes an exec stream (no stdin) into two capped sinks. */
export function captureOutput(
  stream: NodeJS.ReadableStream,
  limits: { stdout: number; stderr: number },
): CapturedOutput {
  const stdout = new CappedSink(limits.stdout);
  const stderr = new CappedSink(limits.stderr);
  stream.on("error", () => undefined);
  stream.pipe(new Demultiplexer(stdout, stderr));
  const ended = Promise.all([finished(stdout), finished(stderr)]).then(
    () => "ended" as const,
    () => "ended" as const,
  );
  return { stdout, stderr, ended };
}
