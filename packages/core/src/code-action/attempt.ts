import type { SandboxSession } from "@codeaction/sandbox";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { Logger } from "pino";
import type { CallGate } from "../durable/call-gate.ts";
import { openCallGate } from "../durable/interrupt.ts";
import { CodeActionError } from "../errors/code-action-error.ts";
import { ModelCallError } from "../errors/model-call-error.ts";
import { SandboxRunError } from "../errors/sandbox-run-error.ts";
import { observeProgram } from "../tracing/observe-program.ts";
import { startChildRun } from "../tracing/turn-run.ts";
import type { Attempt, AttemptStatus } from "../types.ts";
import { placeDataFiles } from "./data-files.ts";
import { readReplyProgram } from "./extract-program.ts";
import { askWithSearches } from "./function-lookup.ts";
import { type CollectedFiles, collectOutputFiles, type OutputFileLimits } from "./output-files.ts";
import { relayCommand, spawnRelay } from "./relay-process.ts";
import { outputBytesOf, type ProgramRun, runProgram } from "./run-program.ts";
import { noFiles, type SampleOptions, type TurnContext, trackCleanup } from "./turn-context.ts";
import { textOf } from "./turn-messages.ts";

/** An attempt, with its run and the files it saved when a container ran, or why the reply was refused before one. */
export type AttemptOutcome = { attempt: Attempt; run?: ProgramRun; files?: CollectedFiles; refusal?: string };

export type AttemptOptions = SampleOptions & {
  attemptNumber: number;
  modelMessages: BaseMessage[];
  attemptsSoFar: Attempt[];
  logger?: Logger;
};

/** The fields every attempt record starts with: who wrote which program, and what it cost. */
type AttemptBase = Pick<Attempt, "attempt" | "sample" | "escalated" | "program" | "modelReply" | "usage">;

/**
 * One attempt as a child chain run of the turn ("attempt 2", tagged "repair" or "escalation"):
 * the model call (a child LLM run), a fresh container, the program and its tool calls (tool runs).
 */
export async function runAttempt(
  context: TurnContext,
  attemptOptions: AttemptOptions,
): Promise<AttemptOutcome> {
  const { attemptNumber, sample, escalated } = attemptOptions;
  context.observer.attemptStarted();
  const attemptRun = await startChildRun(context.callbacks, {
    name: `attempt ${attemptNumber}`,
    inputs: { attempt: attemptNumber, ...(sample ? { sample } : {}) },
    tags: [
      ...(attemptNumber > 1 ? ["repair"] : []),
      ...(escalated ? ["escalation"] : []),
      ...(sample ? [`sample:${sample}`] : []),
    ],
    metadata: { attempt: attemptNumber, ...(sample ? { sample } : {}), ...(escalated ? { escalated } : {}) },
  });
  try {
    const outcome = await runAttemptSteps(context, attemptOptions, attemptRun?.getChild());
    const { attempt } = outcome;
    await attemptRun?.handleChainEnd({
      status: attempt.status,
      exitCode: attempt.exitCode,
      ...(attempt.result === undefined ? {} : { result: attempt.result }),
    });
    return outcome;
  } catch (error) {
    await attemptRun?.handleChainError(error);
    throw error;
  }
}

/** The model call, then (for a reply holding one program) the run in a fresh container. */
async function runAttemptSteps(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  callbacks: CallbackManager | undefined,
): Promise<AttemptOutcome> {
  const { attemptNumber, sample, escalated, logger } = attemptOptions;
  const attemptStarted = performance.now();
  // A resumed attempt runs the program it was interrupted in: no model call.
  const given = attemptOptions.resume?.reply;
  const { reply, usage } =
    given === undefined
      ? await askWithSearches({
          plan: context.discovery,
          messages: attemptOptions.modelMessages,
          ask: () => askModel(context, attemptOptions, callbacks),
          onSearch: (queries) =>
            logger?.debug({ attempt: attemptNumber, queries }, "code-action function search"),
        })
      : { reply: new AIMessage(given), usage: undefined };
  const modelMs = Math.round(performance.now() - attemptStarted);
  const replyText = textOf(reply.content);
  const read = readReplyProgram(replyText);
  const program = read.ok ? read.program : "";
  context.emit({
    type: "program-start",
    runId: context.runId,
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    program,
  });
  logger?.debug({ attempt: attemptNumber, program }, `code-action program:\n${program}`);
  const base: AttemptBase = {
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
    program,
    modelReply: replyText,
    usage,
  };
  // A reply with no single program is refused here: an attempt, and no container.
  if (!read.ok) return { attempt: refusedAttempt(base, { attemptStarted, modelMs }), refusal: read.message };

  const { run, files, containerStartMs, gate } = await runInContainer(
    context,
    attemptOptions,
    base,
    callbacks,
  );
  const timings = {
    modelMs,
    containerStartMs,
    runMs: Math.round(run.runMs),
    totalMs: Math.round(performance.now() - attemptStarted),
  };
  const attempt = { ...ranAttempt(context, base, run, timings), callLog: gate.log.entries() };
  return { attempt, run, files };
}

/** The model's reply; a failed call is a ModelCallError naming the attempts so far. */
function askModel(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  callbacks: CallbackManager | undefined,
): Promise<BaseMessage> {
  const { signal } = context;
  const { model, attemptNumber: attempt, sample, escalated } = attemptOptions;
  return context.observer
    .modelCall(model, { attempt, sample, escalated }, () =>
      model.invoke(attemptOptions.modelMessages, { signal, ...(callbacks ? { callbacks } : {}) }),
    )
    .catch((error: unknown) => {
      if (signal.aborted) throw error;
      if (CodeActionError.isInstance(error)) throw withRun(error, context);
      throw new ModelCallError({ runId: context.runId, attempts: [...context.attempts], cause: error });
    });
}

/**
 * A CodeActionError the model call threw itself (a ScriptedChatModel out of replies, a budget
 * reached) keeps its class and message, and gets this run's `runId` and the attempts so far where
 * it carries none, as a ModelCallError would.
 */
function withRun(error: CodeActionError, context: TurnContext): CodeActionError {
  const fields = error as CodeActionError & { runId?: string; attempts?: Attempt[] };
  fields.runId ??= context.runId;
  fields.attempts ??= [...context.attempts];
  return error;
}

/**
 * The program in a fresh container: its data files placed first, its tool calls traced, its saved
 * files read back after a successful run. The container's removal is left in flight.
 */
async function runInContainer(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  base: AttemptBase,
  callbacks: CallbackManager | undefined,
): Promise<{ run: ProgramRun; files: CollectedFiles; containerStartMs: number; gate: CallGate }> {
  const { options, runId, emit, signal } = context;
  const { settings } = options;
  const { attemptNumber, sample, logger } = attemptOptions;
  const { program } = base;
  const containerStarted = performance.now();
  const session = await createSessionFor(context, attemptOptions);
  const containerStartMs = Math.round(performance.now() - containerStarted);
  const step = { attempt: attemptNumber, sample, escalated: attemptOptions.escalated };
  const { observed, tracker } = observeProgram(
    context.observer,
    { ...step, program, session, callbacks },
    options.tools,
  );
  // The call log's seam: every call logged; a resumed attempt's answered from its log.
  const gate = openCallGate(
    context,
    {
      attempt: {
        number: attemptNumber,
        ...pick(base, "sample", "escalated"),
        program,
        modelReply: base.modelReply,
      },
      modelMessages: attemptOptions.modelMessages,
      resume: attemptOptions.resume,
    },
    tracker.tools,
  );
  // With data files, the relay starts while they stream in (it waits for the program).
  const relay = options.dataFiles?.length
    ? spawnRelay(session, settings.preimport, logger ? { logger } : {})
    : undefined;
  try {
    if (options.dataFiles?.length) await placeDataFilesFor(context, session, attemptOptions);
    const run = await runProgram({
      session,
      ...(relay ? { relay } : {}),
      program,
      stubsSource: context.stubsSource,
      preimport: settings.preimport,
      tools: gate.tools,
      runId,
      execTimeout: settings.execTimeout,
      maxToolCalls: settings.maxToolCalls,
      ...(settings.maxRequestBytes === undefined ? {} : { maxRequestBytes: settings.maxRequestBytes }),
      ...(settings.maxResultBytes === undefined ? {} : { maxResultBytes: settings.maxResultBytes }),
      approval: gate.approval,
      logger,
      // Tool events name the attempt and sample their program belongs to (samples run at once).
      onEvent: (event) => {
        tracker.onEvent(event);
        emit(
          event.type === "tool-call" || event.type === "tool-result"
            ? { ...event, attempt: attemptNumber, ...(sample ? { sample } : {}) }
            : event,
        );
      },
      onOutput: (stream, chunk) => context.observer.programOutput(emit, { ...step, stream }, chunk),
      signal,
    });
    // Files come back only from a run that printed its answer, before its container goes. When the
    // relay saw /workspace/out empty, reading it (one exec) is skipped.
    const files =
      run.status === "ok" && run.outputEntries !== 0
        ? await collectFiles(session, settings.outputFiles, logger)
        : noFiles;
    observed.end(run);
    return { run, files, containerStartMs, gate };
  } catch (error) {
    observed.fail(error);
    throw error;
  } finally {
    releaseContainer(context, session, tracker.settled(), logger);
  }
}

/**
 * Starts the container's removal, off the critical path: the answer does not wait for it, the
 * agent's close() does (and an aborted turn does, with the attempt's tool calls still running).
 */
function releaseContainer(
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

/** The record of a program that ran; a RESULT that fails the response format makes it "invalid-result". */
function ranAttempt(
  context: TurnContext,
  base: AttemptBase,
  run: ProgramRun,
  timings: Attempt["timings"],
): Attempt {
  const { answerShape } = context.options;
  // runProgram's status is "ok" only for exit 0 with a RESULT line (findResult, the one parser).
  const result = run.result;
  let status: AttemptStatus = run.status;
  const check = status === "ok" && answerShape ? answerShape.check(result ?? "") : undefined;
  if (check && !check.ok) status = "invalid-result";
  const { usage, ...identity } = base;
  return {
    ...identity,
    stdout: run.stdout,
    stderr: run.stderr,
    ...outputBytesOf(run),
    exitCode: run.exitCode,
    status,
    ...(status === "ok" ? { result } : {}),
    ...(check && !check.ok ? { result, invalidResult: check.problem } : {}),
    truncated: run.truncated,
    toolCalls: run.toolCalls,
    timings,
    usage,
  };
}

/** The files of /workspace/out; a failure to read them is reported as a refusal, not a failed run. */
async function collectFiles(
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

/** The record of a reply that held no program (none, or several): nothing ran. */
function refusedAttempt(base: AttemptBase, clock: { attemptStarted: number; modelMs: number }): Attempt {
  return {
    ...base,
    stdout: "",
    stderr: "",
    exitCode: null,
    status: "no-program",
    truncated: false,
    toolCalls: [],
    timings: {
      modelMs: clock.modelMs,
      containerStartMs: 0,
      runMs: 0,
      totalMs: Math.round(performance.now() - clock.attemptStarted),
    },
  };
}

/**
 * A fresh container for an attempt. When the turn is aborted while the container starts, the
 * attempt stops waiting at once, and the container is removed as soon as it exists; a request
 * still waiting for a slot leaves the sandbox's line and no container is started for it.
 */
async function createSessionFor(
  context: TurnContext,
  attemptOptions: AttemptOptions,
): Promise<SandboxSession> {
  const { options, runId, signal } = context;
  const { logger, attemptNumber } = attemptOptions;
  signal.throwIfAborted();
  // The signal takes a waiting request out of the line at once; a cold container starts with the relay.
  const creating = options.sandbox.createSession({
    ...(logger ? { logger } : {}),
    signal,
    command: relayCommand(options.settings.preimport),
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

/** The fields of `source` that are set, of those named. */
function pick<Source extends object, Key extends keyof Source>(
  source: Source,
  ...keys: Key[]
): Partial<Pick<Source, Key>> {
  return Object.fromEntries(
    keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]),
  ) as Partial<Pick<Source, Key>>;
}

/** The turn's data files placed in the attempt's container, each report a `data-file-copy` event. */
async function placeDataFilesFor(
  context: TurnContext,
  session: SandboxSession,
  attemptOptions: AttemptOptions,
): Promise<void> {
  const { attemptNumber, sample, logger } = attemptOptions;
  const placed = await session.filesPlaced();
  if (placed.length > 0) logger?.debug({ placed }, "files placed before the turn (a prelaunch's)");
  await placeDataFiles(session, context.options.dataFiles ?? [], (copy) =>
    context.emit({
      type: "data-file-copy",
      runId: context.runId,
      attempt: attemptNumber,
      ...(sample ? { sample } : {}),
      ...copy,
    }),
  );
}
