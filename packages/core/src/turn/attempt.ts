import type { CallbackManager } from "@langchain/core/callbacks/manager";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { Logger } from "pino";
import type { CallGate } from "../bridge/call-gate.ts";
import { askWithSearches } from "../discovery/function-lookup.ts";
import { CodeActionError } from "../errors/code-action-error.ts";
import { ModelCallError } from "../errors/model-call-error.ts";
import type { CollectedFiles } from "../output/output-files.ts";
import { spawnRelay } from "../program/relay-process.ts";
import {
  outputBytesOf,
  type ProgramRun,
  type RunProgramOptions,
  runProgram,
} from "../program/run-program.ts";
import type { StepSpace } from "../steps/step-space.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { ModelCallEvents } from "../tracing/model-events.ts";
import { observeProgram } from "../tracing/observe-program.ts";
import { startChildRun } from "../tracing/turn-run.ts";
import type { Attempt, AttemptStatus } from "../types.ts";
import {
  collectFiles,
  createSessionFor,
  placeDataFilesFor,
  programRunOptions,
  releaseContainer,
} from "./attempt-container.ts";
import { readReplyProgram } from "./extract-program.ts";
import { openCallGate } from "./interrupt.ts";
import { noFiles, type SampleOptions, type TurnContext, trackCleanup } from "./turn-context.ts";
import { textOf } from "./turn-messages.ts";

/** An attempt, with its run and the files it saved when a container ran, or why the reply was refused before one. */
export type AttemptOutcome = { attempt: Attempt; run?: ProgramRun; files?: CollectedFiles; refusal?: string };

export type AttemptOptions = SampleOptions & {
  /** With steps or a thread: the one interpreter every attempt of the sample runs in. */
  space?: StepSpace | undefined;
  attemptNumber: number;
  /** With steps: the step this attempt's program belongs to. */
  step?: number;
  modelMessages: BaseMessage[];
  attemptsSoFar: Attempt[];
  logger?: Logger;
};

/** The fields every attempt record starts with: who wrote which program, and what it cost. */
type AttemptBase = Pick<
  Attempt,
  "attempt" | "sample" | "escalated" | "step" | "program" | "modelReply" | "usage"
>;

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
  const { reply, usage } = await replyFor(context, attemptOptions, callbacks);
  const modelMs = Math.round(performance.now() - attemptStarted);
  const replyText = textOf(reply.content);
  const read = readReplyProgram(replyText);
  const program = read.ok ? read.program : "";
  const step = attemptOptions.step;
  context.emit({
    type: "program-start",
    runId: context.runId,
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    ...(step === undefined ? {} : { step }),
    program,
  });
  logger?.debug({ attempt: attemptNumber, program }, `code-action program:\n${program}`);
  const base: AttemptBase = {
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
    ...(step === undefined ? {} : { step }),
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
  const attempt = {
    ...ranAttempt(context, base, run, timings),
    ...(run.living && run.summary !== undefined ? { interpreterSummary: run.summary } : {}),
    callLog: gate.log.entries(),
  };
  return { attempt, run, files };
}

/** The model's reply (after its function searches); a resumed attempt's is given: no model call. */
function replyFor(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  callbacks: CallbackManager | undefined,
): Promise<{ reply: BaseMessage; usage: Attempt["usage"] }> {
  const given = attemptOptions.resume?.reply;
  if (given !== undefined) return Promise.resolve({ reply: new AIMessage(given), usage: undefined });
  return askWithSearches({
    plan: context.discovery,
    messages: attemptOptions.modelMessages,
    ask: () => askModel(context, attemptOptions, callbacks),
    onSearch: (queries) =>
      attemptOptions.logger?.debug(
        { attempt: attemptOptions.attemptNumber, queries },
        "code-action function search",
      ),
  });
}

/** The model's reply; a failed call is a ModelCallError naming the attempts so far. */
function askModel(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  callbacks: CallbackManager | undefined,
): Promise<BaseMessage> {
  const { signal } = context;
  const { model, attemptNumber: attempt, sample, escalated } = attemptOptions;
  const events = new ModelCallEvents(context.runId, model, { attempt, sample });
  context.emit(events.start());
  return context.observer
    .modelCall(model, { attempt, sample, escalated }, () =>
      model.invoke(attemptOptions.modelMessages, { signal, ...(callbacks ? { callbacks } : {}) }),
    )
    .then(
      (reply) => {
        context.emit(events.end(reply));
        return reply;
      },
      (error: unknown) => {
        context.emit(events.end(undefined));
        throw error;
      },
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
 * The program in a fresh container (or, with steps, in the sample's live interpreter): its data
 * files placed first, its tool calls traced, its saved files read back after a successful run. A
 * fresh container's removal is left in flight; the space's interpreter stays for the next step.
 */
async function runInContainer(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  base: AttemptBase,
  callbacks: CallbackManager | undefined,
): Promise<{ run: ProgramRun; files: CollectedFiles; containerStartMs: number; gate: CallGate }> {
  const { options } = context;
  const { settings } = options;
  const { attemptNumber, sample, logger, space } = attemptOptions;
  const { program } = base;
  const containerStarted = performance.now();
  const interpreter = await space?.ready(context, attemptOptions);
  const session = interpreter?.session ?? (await createSessionFor(context, attemptOptions));
  const containerStartMs = Math.round(performance.now() - containerStarted);
  const step = { attempt: attemptNumber, sample, escalated: attemptOptions.escalated };
  const { observed, tracker } = observeProgram(
    context.observer,
    {
      ...step,
      ...(attemptOptions.step === undefined ? {} : { step: attemptOptions.step }),
      program,
      session,
      callbacks,
    },
    options.tools,
  );
  const gate = gateFor(context, attemptOptions, base, tracker.tools);
  try {
    const runOptions = programRunOptions(context, { session, program, gate, tracker, step, logger });
    const run = interpreter
      ? await interpreter.run({ ...runOptions, maxToolCalls: space!.callsLeft(settings.maxToolCalls) })
      : await runInFreshContainer(context, attemptOptions, { ...runOptions, session });
    space?.record(program, run, gate.log.entries());
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
    if (interpreter) trackCleanup(context, tracker.settled());
    else releaseContainer(context, session, tracker.settled(), logger);
  }
}

/**
 * The call log's seam: every call logged; a resumed attempt's answered from its log. With steps,
 * an interrupt's state also carries the step and the history before it.
 */
function gateFor(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  base: AttemptBase,
  tools: ToolSpec[],
): CallGate {
  const { space } = attemptOptions;
  return openCallGate(
    context,
    {
      attempt: {
        number: attemptOptions.attemptNumber,
        ...pick(base, "sample", "escalated"),
        program: base.program,
        modelReply: base.modelReply,
      },
      modelMessages: attemptOptions.modelMessages,
      resume: attemptOptions.resume,
      ...(space
        ? {
            steps: () => ({
              step: attemptOptions.step ?? 1,
              seed: space.seed ?? context.seed,
              history: [...space.history],
            }),
          }
        : {}),
    },
    tools,
  );
}

/** A program in a fresh container; with data files, the relay starts while they stream in (it waits for the program). */
async function runInFreshContainer(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  runOptions: RunProgramOptions,
): Promise<ProgramRun> {
  const { session } = runOptions;
  const { logger } = attemptOptions;
  if (!context.options.dataFiles?.length) return runProgram(runOptions);
  const relay = spawnRelay(session, context.options.settings.preimport, logger ? { logger } : {});
  await placeDataFilesFor(context, session, attemptOptions);
  return runProgram({ ...runOptions, relay });
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

/** The fields of `source` that are set, of those named. */
function pick<Source extends object, Key extends keyof Source>(
  source: Source,
  ...keys: Key[]
): Partial<Pick<Source, Key>> {
  return Object.fromEntries(
    keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]),
  ) as Partial<Pick<Source, Key>>;
}
