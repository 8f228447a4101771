import type { SandboxSession } from "@codeaction/sandbox";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { BaseMessage } from "@langchain/core/messages";
import type { Logger } from "pino";
import type { DiscoveryPlan, DiscoverySettings } from "../discovery/tool-index.ts";
import type { UsedStates } from "../durable/used-states.ts";
import type { ChatModelRunnable } from "../model/model.ts";
import type { CollectedFiles, OutputFileLimits } from "../output/output-files.ts";
import type { DataFile } from "../program/data-files.ts";
import type { AnswerShape } from "../structured-answer.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { RunObserver } from "../tracing/run-observer.ts";
import type { AgentEvent, ApprovalHook, Attempt, ThreadReport } from "../types.ts";
import type { GateStopped, ResumePlan } from "./stopped-run.ts";

/** codeAction settings, defaults filled (see build-agent.ts). */
export type CodeActionSettings = {
  /** Seconds a program may run (approval waits do not count). */
  execTimeout: number;
  /** Corrected programs after a failed one. */
  maxRepairs: number;
  /** Tool calls per run, failed and unknown ones included. */
  maxToolCalls: number;
  /** Largest request a program may send, in bytes (default 1 MiB). */
  maxRequestBytes?: number;
  /** Largest result the bridge hands back, in bytes of JSON (default 16 MiB). */
  maxResultBytes?: number;
  /** Independent programs per question; 2 or more turn on the agreement check. */
  samples: number;
  /** Programs one question may take as steps in one interpreter (default 1: one program answers). */
  maxSteps?: number;
  /** "run" (default): a fresh interpreter per run; "thread": one per thread_id, kept between runs. */
  state?: "run" | "thread";
  /** Decimal places numbers are compared at in the agreement check. */
  decimals: number;
  /** A stronger model that writes one more program on disagreement or when every attempt failed. */
  escalate?: { model: ChatModelRunnable };
  /** Limits on the files that come back from /workspace/out. */
  outputFiles: OutputFileLimits;
  /** Modules the program's interpreter imports before the program arrives (none by default). */
  preimport?: readonly string[];
  /** When the prompt carries an index and a ```search step instead of every stub (tool-index.ts); false: never. */
  discovery?: DiscoverySettings | false;
};

export type CodeActionTurnOptions = {
  model: ChatModelRunnable;
  /**
   * Where fresh containers come from: one per attempt (a SandboxManager). `logger` carries the
   * run id (its commands, its egress requests).
   */
  sandbox: {
    createSession(options?: {
      logger?: Logger;
      signal?: AbortSignal;
      command?: string[];
      /** The turn's data files: a container started for this attempt on a local engine mounts them. */
      mountFiles?: string[];
    }): Promise<SandboxSession>;
  };
  tools: ToolSpec[];
  settings: CodeActionSettings;
  instructions?: string;
  approval?: ApprovalHook;
  logger?: Logger;
  /** What the sandbox has, for the prompt ("Python 3.11 with the standard library only ..."). */
  sandboxDescription?: string;
  /** What the program may reach, for the prompt (describeNetwork; default: no network). */
  networkRule?: string;
  /** `responseFormat`, compiled: a RESULT that does not match it is repaired like a failed run. */
  answerShape?: AnswerShape;
  /** Host files placed read-only at /workspace/data in each attempt's container. */
  dataFiles?: DataFile[];
  /** Signs the states of interrupted runs (buildAgent's resumeSecret). */
  resumeSecret?: string | Uint8Array;
  /** Where consumed states are recorded (buildAgent's usedStates; this process's record without one). */
  usedStates?: UsedStates;
  /** Receives every container removal, so close() can wait for them. */
  trackRemoval?: (removal: Promise<void>) => void;
};

/** What every part of one turn shares: its options, its run, its events and what it must wait for. */
export type TurnContext = {
  options: CodeActionTurnOptions;
  messages: BaseMessage[];
  runId: string;
  /** The tools module's stubs, `random` seeded with `seed` (determinism.ts). */
  stubsSource: string;
  /** The same stubs unseeded: a re-executed history seeds them with its own seed. */
  rawStubsSource: string;
  /** SHA-256 of the stubs module (without the seed): a resumed state's tools must have the same. */
  stubsDigest: string;
  /** The seed of the program's `random` module (the run id; a resumed run keeps its own). */
  seed: string;
  stubSignatures: string;
  /** Set when the catalogue is over the discovery budget: the prompt carries its index. */
  discovery?: DiscoveryPlan;
  emit: (event: AgentEvent) => void;
  signal: AbortSignal;
  logger?: Logger;
  callbacks?: CallbackManager;
  /** The run's usage, budget and spans. */
  observer: RunObserver;
  /** Every attempt that ended so far, across samples (for an AbortError). */
  attempts: Attempt[];
  /** Container removals and tool calls in flight: waited for when the turn is aborted. */
  cleanups: Set<Promise<unknown>>;
  /** Stops the turn as its signal does, with `reason`: a call gate's interrupt or divergence. */
  abort: (reason: unknown) => void;
  /** With state "thread": the run's thread, as the result reports it (set while the run goes). */
  thread?: ThreadReport;
  /** What a call gate stopped the turn for (turn/interrupt.ts), once one did. */
  stopped?: GateStopped;
};

/** One sample's model and opening messages (the escalation is one more sample). */
export type SampleOptions = {
  model: ChatModelRunnable;
  opening: BaseMessage[];
  sample?: number;
  escalated?: boolean;
  /** A resumed run: its first attempt's reply is given (no model call) and its calls are answered from the log. */
  resume?: ResumePlan;
};

/** A sample's attempts, and its answer and files when one of them succeeded. */
export type SampleOutcome = { attempts: Attempt[]; answer?: string; files?: CollectedFiles };

export const noFiles: CollectedFiles = { files: [], refused: [] };

/** Adds `pending` to what an aborted turn waits for, until it settles. */
export function trackCleanup(context: TurnContext, pending: Promise<unknown>): void {
  const settled = pending.catch(() => undefined);
  context.cleanups.add(settled);
  void settled.finally(() => context.cleanups.delete(settled));
}

/** Waits until nothing is pending, including what is added while waiting. */
export async function settleAll(pending: Set<Promise<unknown>>): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}
