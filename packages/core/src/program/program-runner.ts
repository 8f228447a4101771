import { randomUUID } from "node:crypto";
import type { SandboxConfigInput, SandboxManager, SandboxSession } from "@codeaction/sandbox";
import type { Logger } from "pino";
import { SandboxUnavailableError } from "../errors/sandbox-unavailable-error.ts";
import { renderStubSignatures, renderStubsModule } from "../prompt/python-stubs.ts";
import { type RunnerThreadOptions, RunnerThreads } from "../steps/runner-threads.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { LiveOutput } from "../tracing/live-output.ts";
import type { AgentEvent, ApprovalHook } from "../types.ts";
import { newSandboxManager } from "./new-sandbox-manager.ts";
import { relayCommand } from "./relay-process.ts";
import { type ProgramRun, runProgram } from "./run-program.ts";

/** Options of `createProgramRunner`: the tools a program may call, the sandbox settings, the caps and hooks of a turn. */
export type ProgramRunnerOptions = {
  /** The tools every program may call, bridged as in a code-action turn. */
  tools: ToolSpec[];
  /** Sandbox settings (default { network: "none" }), as buildAgent's `sandbox`. */
  sandbox?: SandboxConfigInput;
  /** Seconds a program may run; approval waits do not count (default 120, as in a turn). */
  execTimeout?: number;
  /** Tool calls per program, failed and unknown ones included (default 50, as in a turn). */
  maxToolCalls?: number;
  /** Gates every tool call. */
  approval?: ApprovalHook;
  logger?: Logger;
  /**
   * Threads: `run(program, { thread })` runs in that thread's live interpreter, kept between runs
   * (docs/steps-and-threads.md), bounded by `maxThreads` (default 8) and `idleSeconds` (default 600).
   */
  threads?: RunnerThreadOptions;
};

/** How one program run ended (`runner.run()`): its output, status, tool calls and timings. */
export type ProgramRunResult = ProgramRun & {
  runId: string;
  /** Milliseconds to get a started container (from the pool when one is warm). */
  containerStartMs: number;
  /**
   * Run on a thread: its name, and `fresh` when its interpreter was started for this run (the
   * first run, or after it was stopped: earlier variables are gone).
   */
  thread?: { id: string; fresh: boolean };
};

/** `runner.run()`'s options: events, cancellation, and the thread to run in (with `threads`). */
export type RunOptions = {
  onEvent?: (event: AgentEvent) => void;
  signal?: AbortSignal;
  /** Runs in this thread's live interpreter (the runner needs `threads`): what earlier runs on it left is there. */
  thread?: string;
};

/** Runs hand-written (or client-sent) programs the way a code-action turn runs a model's, without a model. */
export type ProgramRunner = {
  readonly tools: readonly ToolSpec[];
  /** The stubs the programs see: signatures and docstrings, as in the model's prompt. */
  readonly stubSignatures: string;
  readonly execTimeout: number;
  readonly maxToolCalls: number;
  /**
   * One program in a fresh container, removed afterwards. Never throws for what the program does.
   * `onEvent` gets the tool events and, while the program runs, its `program-output` lines
   * (attempt 1; bounded as in `stream()`: 2000 lines or 256 KiB, then one event with `cut: true`).
   */
  run(program: string, options?: RunOptions): Promise<ProgramRunResult>;
  /** Removes every container of this runner (waiting for pending removals). Idempotent. */
  close(): Promise<void>;
  /** `await using runner = await createProgramRunner(...)`: the same as `close()`. */
  [Symbol.asyncDispose](): Promise<void>;
};

/**
 * A runner with the same stubs, bridge, caps and container flags as a code-action turn. Checks the
 * sandbox first (ready()), so a missing engine or image fails here with SandboxUnavailableError.
 */
export async function createProgramRunner(options: ProgramRunnerOptions): Promise<ProgramRunner> {
  const runner: RunnerState = {
    options,
    manager: await readyManager(options),
    stubsSource: renderStubsModule(options.tools),
    execTimeout: options.execTimeout ?? 120,
    maxToolCalls: options.maxToolCalls ?? 50,
    pendingRemovals: new Set(),
  };
  const manager = runner.manager;
  runner.threads = options.threads
    ? new RunnerThreads(() => manager.createSession({ command: relayCommand() }), options.threads)
    : undefined;
  let closing: Promise<void> | undefined;

  const run: ProgramRunner["run"] = async (program, runOptions = {}) => {
    if (closing) throw new TypeError("this program runner was shut down; create a new one");
    if (runOptions.thread === undefined) return runInFreshContainer(runner, program, runOptions);
    if (!runner.threads) {
      throw new TypeError(
        "run(program, { thread }) needs a runner made with createProgramRunner({ threads })",
      );
    }
    return runOnThread(runner, runner.threads, program, { ...runOptions, thread: runOptions.thread });
  };

  const close = () => {
    closing ??= (async () => {
      await runner.threads?.close();
      await Promise.allSettled([...runner.pendingRemovals]);
      await runner.manager.close();
    })();
    return closing;
  };

  return {
    tools: options.tools,
    stubSignatures: renderStubSignatures(options.tools),
    execTimeout: runner.execTimeout,
    maxToolCalls: runner.maxToolCalls,
    run,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** What every run of one runner shares. */
type RunnerState = {
  options: ProgramRunnerOptions;
  manager: SandboxManager;
  stubsSource: string;
  execTimeout: number;
  maxToolCalls: number;
  /** Container removals still running, awaited by close(). */
  pendingRemovals: Set<Promise<void>>;
  threads?: RunnerThreads | undefined;
};

/** A sandbox manager whose engine and image answered; else SandboxUnavailableError. */
async function readyManager(options: ProgramRunnerOptions): Promise<SandboxManager> {
  const manager = newSandboxManager(options.sandbox ?? { network: "none" }, {
    ...(options.logger ? { logger: options.logger } : {}),
    warmCommand: relayCommand(),
  });
  try {
    await manager.ready();
  } catch (error) {
    await manager.close().catch(() => undefined);
    throw new SandboxUnavailableError({ what: "running a program", cause: error });
  }
  return manager;
}

/** The settings of one run of `program` (runProgram's, the session aside). */
function programOptions(
  runner: RunnerState,
  program: string,
  runId: string,
  runOptions: RunOptions,
  live: LiveOutput | undefined,
) {
  const { options } = runner;
  const logger = options.logger?.child({ runId });
  return {
    program,
    stubsSource: runner.stubsSource,
    tools: options.tools,
    runId,
    execTimeout: runner.execTimeout,
    maxToolCalls: runner.maxToolCalls,
    ...(options.approval ? { approval: options.approval } : {}),
    ...(logger ? { logger } : {}),
    ...(runOptions.onEvent ? { onEvent: runOptions.onEvent } : {}),
    ...(live
      ? { onOutput: (stream: "stdout" | "stderr", chunk: Buffer) => live.feed({ attempt: 1, stream }, chunk) }
      : {}),
    ...(runOptions.signal ? { signal: runOptions.signal } : {}),
  };
}

/** One program in a thread's live interpreter (started for it when it has none alive). */
async function runOnThread(
  runner: RunnerState,
  threads: RunnerThreads,
  program: string,
  runOptions: RunOptions & { thread: string },
): Promise<ProgramRunResult> {
  const runId = `run_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const started = performance.now();
  let containerStartMs = 0;
  const live = runOptions.onEvent ? new LiveOutput({ runId, emit: runOptions.onEvent }) : undefined;
  const { run, fresh } = await threads.run(runOptions.thread, (interpreter) => {
    containerStartMs = Math.round(performance.now() - started);
    return interpreter.run(programOptions(runner, program, runId, runOptions, live));
  });
  live?.flush({ attempt: 1 });
  return { ...run, runId, containerStartMs, thread: { id: runOptions.thread, fresh } };
}

/** One program in a fresh container; the container's removal is started, not awaited. */
async function runInFreshContainer(
  runner: RunnerState,
  program: string,
  runOptions: { onEvent?: (event: AgentEvent) => void; signal?: AbortSignal },
): Promise<ProgramRunResult> {
  const { options, pendingRemovals } = runner;
  const runId = `run_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const logger = options.logger?.child({ runId });
  const started = performance.now();
  const session: SandboxSession = await runner.manager.createSession({
    ...(logger ? { logger } : {}),
    command: relayCommand(),
  });
  const containerStartMs = Math.round(performance.now() - started);
  const live = runOptions.onEvent ? new LiveOutput({ runId, emit: runOptions.onEvent }) : undefined;
  try {
    const outcome = await runProgram({
      session,
      ...programOptions(runner, program, runId, runOptions, live),
    });
    live?.flush({ attempt: 1 });
    return { ...outcome, runId, containerStartMs };
  } finally {
    const removal = session.close().catch((error: unknown) => {
      logger?.warn({ error }, "could not remove a program's container; the sandbox sweep will");
    });
    pendingRemovals.add(removal);
    void removal.finally(() => pendingRemovals.delete(removal));
  }
}
