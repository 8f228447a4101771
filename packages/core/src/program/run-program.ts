import type { SandboxSession } from "@codeaction/sandbox";
import {
  type BridgeOptions,
  type BridgeOutcome,
  type RelayProcess,
  runBridge,
} from "../bridge/host-bridge.ts";
import { toolsModuleSource } from "../bridge/python-sources.ts";
import type { AttemptStatus, OutputBytes, ToolCallRecord } from "../types.ts";
import { spawnRelay } from "./relay-process.ts";

/** A run's settings: the bridge's own (see BridgeOptions), the container, and the program's stubs. */
export type RunProgramOptions = Pick<
  BridgeOptions,
  | "program"
  | "tools"
  | "runId"
  | "execTimeout"
  | "maxToolCalls"
  | "maxOutputBytes"
  | "maxRequestBytes"
  | "approval"
  | "logger"
  | "onEvent"
  | "onOutput"
  | "signal"
  | "keep"
> & {
  /** A fresh, started container (one per run). */
  session: SandboxSession;
  /** Python source of the stub functions, inserted into the `codeaction_tools` module. */
  stubsSource: string;
  /** Largest result (JSON bytes) handed back to the program; default 16 MiB (the bridge's maxResponseBytes). */
  maxResultBytes?: number;
  /** Modules the program's interpreter imports before the program arrives (`codeAction.preimport`). */
  preimport?: readonly string[];
};

/** The statuses a run can end with. */
export type RunStatus = Exclude<AttemptStatus, "no-program" | "invalid-result">;

/** One program run in a sandbox: its output, exit, status, RESULT value and tool calls. */
export type ProgramRun = {
  /** The program's exit code (128 + signal when a signal ended it); null when it never reported one. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  /** How the run ended (never "no-program" or "invalid-result": those are decided outside the run). */
  status: RunStatus;
  /** The text after the last stdout line that starts with `RESULT:` (one leading space removed). */
  result?: string;
  toolCalls: ToolCallRecord[];
  runMs: number;
  infrastructureError?: string;
  /** The relay's count of entries in /workspace/out after the program (see RelayExit.outputEntries). */
  outputEntries?: number;
  /** Run as a step (`keep`), the program ended and its interpreter lives on for the next one. */
  living?: boolean;
  /** A living interpreter's summary of what its `__main__` holds (bounded; from the program's process). */
  summary?: string;
} & OutputBytes;

/** The exact-bytes fields of a run, only those present. */
export function outputBytesOf(source: OutputBytes): OutputBytes {
  return {
    ...(source.stdoutBase64 === undefined ? {} : { stdoutBase64: source.stdoutBase64 }),
    ...(source.stderrBase64 === undefined ? {} : { stderrBase64: source.stderrBase64 }),
  };
}

/**
 * Runs one program in `session`'s container through the tool bridge: one exec of the relay, which
 * runs the program and carries its tool calls (docs/bridge-protocol.md). Never throws for anything
 * the program or the channel does: the status says how the run ended. The caller closes the
 * container afterwards (also after a timeout: the container is the last resort).
 */
export async function runProgram(
  options: RunProgramOptions & { relay?: RelayProcess | Error },
): Promise<ProgramRun> {
  const process =
    options.relay ??
    spawnRelay(options.session, options.preimport, options.logger ? { logger: options.logger } : {});
  if (process instanceof Error) {
    return infrastructureRun(`could not start the bridge relay: ${process.message}`);
  }
  return runProgramOver({ ...options, process, inspect: () => options.session.inspect() });
}

export type RunProgramOverOptions = Omit<RunProgramOptions, "session"> & {
  /** The relay's process, already started with relayCommand() (relay-process.ts). */
  process: RelayProcess;
  /** The container's inspect, asked whether the kernel killed something for lack of memory. */
  inspect?: () => Promise<{ State?: { OOMKilled?: boolean; Running?: boolean } }>;
  /** Defaults to /workspace/.codeaction (tests point it at a temp folder). */
  bridgeDirectory?: string;
  /** Defaults to /workspace. */
  workDirectory?: string;
  /** Defaults to true (the relay never does it as uid 0). */
  killStragglers?: boolean;
};

/** runProgram over any relay process: a sandbox exec, or a local child process in protocol tests. */
export async function runProgramOver(options: RunProgramOverOptions): Promise<ProgramRun> {
  const outcome = await runBridge({
    process: options.process,
    program: options.program,
    toolsModule: toolsModuleSource(options.stubsSource),
    tools: options.tools,
    runId: options.runId,
    execTimeout: options.execTimeout,
    maxToolCalls: options.maxToolCalls,
    ...(options.maxOutputBytes === undefined ? {} : { maxOutputBytes: options.maxOutputBytes }),
    ...(options.maxRequestBytes === undefined ? {} : { maxRequestBytes: options.maxRequestBytes }),
    ...(options.maxResultBytes === undefined ? {} : { maxResponseBytes: options.maxResultBytes }),
    ...(options.approval ? { approval: options.approval } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.onOutput ? { onOutput: options.onOutput } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.bridgeDirectory ? { bridgeDirectory: options.bridgeDirectory } : {}),
    ...(options.workDirectory ? { workDirectory: options.workDirectory } : {}),
    ...(options.killStragglers === undefined ? {} : { killStragglers: options.killStragglers }),
    ...(options.keep ? { keep: true } : {}),
  });
  // The last RESULT line decides; when the cap cut it away, an earlier one is not the answer.
  const result = outcome.resultLost ? undefined : findResult(outcome.stdout);
  const { status, infrastructureError } = await statusOf(outcome, result, options.inspect);
  options.logger?.debug(
    { runId: options.runId, status, exitCode: outcome.exit?.exitCode ?? null, runMs: outcome.runMs },
    "program finished",
  );
  return {
    exitCode: outcome.exit?.exitCode ?? null,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    ...outputBytesOf(outcome),
    truncated: outcome.truncated,
    status,
    ...(result === undefined ? {} : { result }),
    toolCalls: outcome.toolCalls,
    runMs: outcome.runMs,
    ...(infrastructureError === undefined ? {} : { infrastructureError }),
    ...(outcome.exit?.outputEntries === undefined ? {} : { outputEntries: outcome.exit.outputEntries }),
    ...(outcome.exit?.living && outcome.failure === undefined ? { living: true } : {}),
    ...(outcome.exit?.summary === undefined ? {} : { summary: outcome.exit.summary }),
  };
}

async function statusOf(
  outcome: BridgeOutcome,
  result: string | undefined,
  inspect: RunProgramOverOptions["inspect"],
): Promise<{ status: RunStatus; infrastructureError?: string }> {
  if (outcome.timedOut) return { status: "timeout" };
  // The host ended a run that flooded the bridge: the program's failure, whatever the relay reported.
  if (outcome.flooded) return { status: "tool-limit" };
  if (outcome.aborted) return { status: "aborted" };
  const exit = outcome.exit;
  if (outcome.failure !== undefined || exit === undefined) {
    // The kernel's OOM killer may have taken the relay itself.
    if (await oomKilled(inspect)) return { status: "oom" };
    // The program (same uid) can signal its relay: its failure, when the container still runs. A
    // container that stopped (dockerd restarted, the engine killed it) is the infrastructure's.
    if (outcome.relaySignal !== undefined && (await staysRunning(inspect))) return { status: "error" };
    return { status: "infrastructure", infrastructureError: outcome.failure ?? "the relay reported no exit" };
  }
  // A SIGKILL the host did not send is the OOM killer; `sys.exit(137)` is only an exit code.
  if (exit.exitCode !== 0 && !exit.killed && (exit.signal === 9 || (await oomKilled(inspect)))) {
    return { status: "oom" };
  }
  if (outcome.limitHit) return { status: "tool-limit" };
  if (exit.exitCode !== 0) return { status: "error" };
  return { status: result === undefined ? "no-result" : "ok" };
}

/**
 * Whether the container runs now and still does 2 s later. An engine that stops a container (a
 * dockerd shutting down kills PID 1, and with it the relay) can still report it running for a
 * moment after the relay's exit; a program that killed its own relay leaves it running.
 */
async function staysRunning(inspect: RunProgramOverOptions["inspect"]): Promise<boolean> {
  if (!inspect) return true;
  for (let check = 0; check < 5; check += 1) {
    if (check > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    try {
      if ((await inspect()).State?.Running !== true) return false;
    } catch {
      return false;
    }
  }
  return true;
}

async function oomKilled(inspect: RunProgramOverOptions["inspect"]): Promise<boolean> {
  if (!inspect) return false;
  try {
    return (await inspect()).State?.OOMKilled === true;
  } catch {
    return false;
  }
}

const cutMarker = /^\[\.\.\. cut here: \d+ bytes of stdout omitted \.\.\.\]$/;

/**
 * The text after the last line of `stdout` that starts with `RESULT:`, without one leading space
 * and a trailing carriage return. A line cut short by the output cap does not count.
 */
export function findResult(stdout: string): string | undefined {
  const lines = stdout.split("\n");
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]!;
    if (!line.startsWith("RESULT:") || cutMarker.test(lines[index + 1] ?? "")) continue;
    const value = line.slice("RESULT:".length).replace(/\r$/, "");
    return value.startsWith(" ") ? value.slice(1) : value;
  }
  return undefined;
}

function infrastructureRun(message: string): ProgramRun {
  return {
    exitCode: null,
    stdout: "",
    stderr: "",
    truncated: false,
    status: "infrastructure",
    toolCalls: [],
    runMs: 0,
    infrastructureError: message,
  };
}
