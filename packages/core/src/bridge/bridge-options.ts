import type { Logger } from "pino";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { AgentEvent, ApprovalHook, OutputBytes, ToolCallRecord } from "../types.ts";

// The bridge's options, outcome and defaults: what runBridge (host-bridge.ts) takes and gives.

/** The relay's exec: what `SandboxSession.spawn` returns (and a local child process in tests). */
export type RelayProcess = {
  stdin: NodeJS.WritableStream;
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  exit: Promise<{ exitCode: number | null }>;
  /** Last resort when the relay does not answer a kill: kills every process the exec started. */
  kill?: () => Promise<void>;
};

/** How the program ended, as the relay reported it. `exitCode` is 128 + signal when signalled. */
export type RelayExit = {
  exitCode: number;
  signal: number | null;
  /** True when the host asked the relay to kill the program (timeout, abort). */
  killed: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  /**
   * Entries the relay saw in the output folder after the program ended (it stops counting at 2);
   * absent when that is not a plain folder or the relay did not say. A hint only: at 0 the host
   * skips reading the folder (the program can only hide its own files that way).
   */
  outputEntries?: number;
  /**
   * A program run as a step (BridgeOptions.keep): its interpreter lives on, waiting for the next
   * step's program on the same relay.
   */
  living?: boolean;
  /** A living interpreter's summary of what its `__main__` holds (from the program's process: hostile, bounded). */
  summary?: string;
};

export type BridgeOptions = {
  process: RelayProcess;
  program: string;
  /** The full `codeaction_tools` module source (see toolsModuleSource). */
  toolsModule: string;
  tools: ToolSpec[];
  runId: string;
  /** Seconds of program time; approval waits do not count. */
  execTimeout: number;
  maxToolCalls: number;
  /** Per stream; default 1 MiB. */
  maxOutputBytes?: number;
  /** Largest request file the relay reads; default 1 MiB. */
  maxRequestBytes?: number;
  /** Largest result (its JSON) the host sends back; default 16 MiB (codeAction.maxResultBytes). */
  maxResponseBytes?: number;
  approval?: ApprovalHook;
  logger?: Logger;
  onEvent?: (event: AgentEvent) => void;
  /** Each chunk of the program's output as it arrives (live output; called synchronously, must not block). */
  onOutput?: (stream: "stdout" | "stderr", chunk: Buffer) => void;
  signal?: AbortSignal;
  /** Where the relay puts the program, the module and the request/response folders. */
  bridgeDirectory?: string;
  /** The program's working directory. */
  workDirectory?: string;
  /** After the program ends, also kill every other process of its uid (never as uid 0). Default true. */
  killStragglers?: boolean;
  /**
   * Run the program as a step: its interpreter outlives it (the relay reports a `living` exit and
   * waits for the next step's start on the same process). The first step's value decides for the
   * relay's life; a run that ends otherwise (timeout, abort, a failure) ends the relay as always.
   */
  keep?: boolean;
  /** How long to wait for the relay's exit report after a kill; default 2000 ms. */
  killGraceMs?: number;
  /** How long the exec and the relay may take to start the program; default 30 s (not program time). */
  startupTimeoutMs?: number;
};

export type BridgeOutcome = {
  /** Absent when the relay never reported an exit (killed past the grace period, or it failed). */
  exit?: RelayExit;
  stdout: string;
  stderr: string;
  truncated: boolean;
  /**
   * The output cap cut the last stdout `RESULT:` line away (wholly or partly): there is no answer,
   * even if an earlier RESULT line is still visible.
   */
  resultLost?: boolean;
  toolCalls: ToolCallRecord[];
  /** True when a call went past maxToolCalls, whether or not the program caught the error. */
  limitHit: boolean;
  /**
   * The relay was killed by this signal before it reported the program's exit: the program's doing
   * (it shares the relay's uid), unless the OOM killer did it. Its stderr says so.
   */
  relaySignal?: number;
  /** The program kept calling far past maxToolCalls (a flood of the bridge): the host ended its run. */
  flooded?: boolean;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the channel broke or the relay broke the protocol: an infrastructure failure. */
  failure?: string;
  runMs: number;
} & OutputBytes;

export const bridgeDefaults = {
  bridgeDirectory: "/workspace/.codeaction",
  workDirectory: "/workspace",
  maxOutputBytes: 1024 * 1024,
  maxRequestBytes: 1024 * 1024,
  maxResponseBytes: 16 * 1024 * 1024,
  /**
   * What the calls of one run may hold on the host at once: their arguments as parsed (reckoned
   * by parsedSizeEstimate) and the answers the program has not yet read. At least twice
   * maxRequestBytes.
   */
  maxBytesInFlight: 24 * 1024 * 1024,
  killGraceMs: 2000,
  startupTimeoutMs: 30_000,
} as const;
