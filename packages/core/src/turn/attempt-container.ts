import type { SandboxSession } from "@codeaction/sandbox";
import type { Logger } from "pino";
import type { CallGate } from "../bridge/call-gate.ts";
import { SandboxRunError } from "../errors/sandbox-run-error.ts";
import { type CollectedFiles, collectOutputFiles, type OutputFileLimits } from "../output/output-files.ts";
import { placeDataFiles } from "../program/data-files.ts";
import { relayCommand } from "../program/relay-process.ts";
import type { RunProgramOptions } from "../program/run-program.ts";
import type { ToolCallTracker } from "../tracing/tool-runs.ts";
import type { Attempt } from "../types.ts";
import { type TurnContext, trackCleanup } from "./turn-context.ts";

// An attempt's container, around its program (attempt.ts): started (with the relay as its first
// command), given the turn's data files, the program's run settings, the files read back, removed.

/** What an attempt says of itself to the container steps. */
type AttemptIdentity = { attemptNumber: number; sample?: number; logger?: Logger; attemptsSoFar: Attempt[] };

/** The settings of one program run in an attempt's container (runProgram's options). */
export function programRunOptions(
  context: TurnContext,
  run: {
    session: SandboxSession;
    program: string;
    gate: CallGate;
    tracker: ToolCallTracker;
    step: { attempt: number; sample?: number | undefined; escalated?: boolean | undefined };
    logger: Logger | undefined;
  },
): RunProgramOptions {
  const { options, runId, emit, signal } = context;
  const { settings } = options;
  const { step, tracker } = run;
  return {
    session: run.session,
    program: run.program,
    stubsSource: context.stubsSource,
    preimport: settings.preimport,
    tools: run.gate.tools,
    runId,
    execTimeout: settings.execTimeout,
    maxToolCalls: settings.maxToolCalls,
    ...(settings.maxRequestBytes === undefined ? {} : { maxRequestBytes: settings.maxRequestBytes }),
    ...(settings.maxResultBytes === undefined ? {} : { maxResultBytes: settings.maxResultBytes }),
    approval: run.gate.approval,
    ...(run.logger ? { logger: run.logger } : {}),
    // Tool events name the attempt and sample their program belongs to (samples run at once).
    onEvent: (event) => {
      tracker.onEvent(event);
      emit(
        event.type === "tool-call" || event.type === "tool-result"
          ? { ...event, attempt: step.attempt, ...(step.sample ? { sample: step.sample } : {}) }
          : event,
      );
    },
    onOutput: (stream, chunk) => context.observer.programOutput(emit, { ...step, stream }, chunk),
    signal,
  };
}

/**
 * A fresh container for an attempt. When the turn is aborted while the container starts, the
 * attempt stops waiting at once, and the container is removed as soon as it exists; a request
 * still waiting for a slot leaves the sandbox's line and no container is started for it.
 */
export async function createSessionFor(
  context: TurnContext,
  attemptOptions: AttemptIdentity,
): Promise<SandboxSession> {
  const { options, runId, signal } = context;
  const { logger, attemptNumber } = attemptOptions;
  signal.throwIfAborted();
  // The signal takes a waiting request out of the line at once; a cold container starts with the relay.
  const creating = options.sandbox.createSession({
    ...(logger ? { logger } : {}),
    signal,
    command: relayCommand(options.settings.preimport),
    ...(options.dataFiles?.length ? { mountFiles: options.dataFiles.map((file) => file.path) } : {}),
  });
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      trackCleanup(
        context,
        creating.then((late) => late.close()),
      );
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([creating, aborted]);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new SandboxRunError({
      runId,
      attempts: attemptOptions.attemptsSoFar,
      cause: error,
      detail: `a container for attempt ${attemptNumber} did not start (${error instanceof Error ? error.message : String(error)})`,
    });
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}

/** The turn's data files placed in the attempt's container, each report a `data-file-copy` event. */
export async function placeDataFilesFor(
  context: TurnContext,
  session: SandboxSession,
  attemptOptions: AttemptIdentity,
): Promise<void> {
  const { attemptNumber, sample, logger } = attemptOptions;
  const before = await session.filesPlaced();
  if (before.length > 0) logger?.debug({ placed: before }, "files placed before the turn (a prelaunch's)");
  await placeDataFiles(session, context.options.dataFiles ?? [], (copy) =>
    context.emit({
      type: "data-file-copy",
      runId: context.runId,
      attempt: attemptNumber,
      ...(sample ? { sample } : {}),
      ...copy,
    }),
  );
  // Which way each file went: bind-mounted read-only at the container's start, or copied.
  const placed = await session.filesPlaced();
  logger?.debug(
    { files: placed.map(({ containerPath, how }) => ({ containerPath, how })) },
    "data files placed",
  );
}

/**
 * Starts the container's removal, off the critical path: the answer does not wait for it, the
 * agent's close() does (and an aborted turn does, with the attempt's tool calls still running).
 */
export function releaseContainer(
  context: TurnContext,
  session: SandboxSession,
  toolCallsSettled: Promise<unknown>,
  logger: Logger | undefined,
): void {
  const removal = session.close().catch((error: unknown) => {
    logger?.warn({ error }, "could not remove a code-action container; the sandbox sweep will");
  });
  context.options.trackRemoval?.(removal);
  trackCleanup(context, removal);
  trackCleanup(context, toolCallsSettled);
}

/** The files of /workspace/out; a failure to read them is reported as a refusal, not a failed run. */
export async function collectFiles(
  session: SandboxSession,
  limits: OutputFileLimits,
  logger: Logger | undefined,
): Promise<CollectedFiles> {
  try {
    return await collectOutputFiles(session, limits);
  } catch (error) {
    logger?.warn({ error }, "could not read /workspace/out");
    const reason = `could not be read: ${error instanceof Error ? error.message : String(error)}`;
    return { files: [], refused: [{ name: "out", reason }] };
  }
}
