import type { SandboxSession } from "@codeaction/sandbox";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import type { Logger } from "pino";
import { AbortError } from "../errors/abort-error.ts";
import { AttemptsExhaustedError } from "../errors/attempts-exhausted-error.ts";
import { CodeActionError } from "../errors/code-action-error.ts";
import { DisagreementError, type SampleRun } from "../errors/disagreement-error.ts";
import { ModelCallError } from "../errors/model-call-error.ts";
import { SandboxRunError } from "../errors/sandbox-run-error.ts";
import type { ChatModelRunnable } from "../model.ts";
import { type AnswerShape, parseJsonAnswer } from "../structured-answer.ts";
import type { ToolSpec } from "../tool-spec.ts";
import { trackToolCalls } from "../tracing/tool-runs.ts";
import { linkedController, startChildRun, type TurnRunOptions } from "../tracing/turn-run.ts";
import type { AgentEvent, AgentResult, ApprovalHook, Attempt, AttemptStatus } from "../types.ts";
import { type DataFile, placeDataFiles } from "./data-files.ts";
import { createEventQueue } from "./event-queue.ts";
import { readReplyProgram } from "./extract-program.ts";
import { normalizeAnswer } from "./normalize-answer.ts";
import { type CollectedFiles, collectOutputFiles, type OutputFileLimits } from "./output-files.ts";
import {
  buildCodeActionPrompt,
  buildEscalationMessage,
  buildRepairMessage,
  buildReplyRepairMessage,
  type ConversationTurn,
  defaultSandboxDescription,
  describeFailure,
  type EscalationCandidate,
  tail,
} from "./prompt.ts";
import { renderStubSignatures, renderStubsModule } from "./python-stubs.ts";
import { outputBytesOf, type ProgramRun, runProgram } from "./run-program.ts";

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
  /** Decimal places numbers are compared at in the agreement check. */
  decimals: number;
  /** A stronger model that writes one more program on disagreement or when every attempt failed. */
  escalate?: { model: ChatModelRunnable };
  /** Limits on the files that come back from /workspace/out. */
  outputFiles: OutputFileLimits;
};

export type CodeActionTurnOptions = {
  model: ChatModelRunnable;
  /** Where fresh containers come from: one per attempt (a SandboxManager). */
  /** Each attempt's container; `logger` carries the run id (its commands, its egress requests). */
  sandbox: { createSession(options?: { logger?: Logger; signal?: AbortSignal }): Promise<SandboxSession> };
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
  /** Receives every container removal, so close() can wait for them. */
  trackRemoval?: (removal: Promise<void>) => void;
};

export type CodeActionTurn = {
  stream(
    messages: BaseMessage[],
    runId: string,
    run?: TurnRunOptions,
  ): AsyncGenerator<AgentEvent, AgentResult>;
};

const streamTailCharacters = 2000;

/**
 * One code-action turn: the model writes a program, it runs in a fresh container, failures are
 * repaired, and with `samples` > 1 independent programs must agree. `run.signal` cancels it at any
 * stage: the turn then removes its containers, waits for its tool calls, and throws an AbortError.
 */
export function createCodeActionTurn(options: CodeActionTurnOptions): CodeActionTurn {
  const stubsSource = renderStubsModule(options.tools);
  const stubSignatures = renderStubSignatures(options.tools);

  return {
    async *stream(messages, runId, run = {}) {
      const queue = createEventQueue<AgentEvent>();
      const { controller, unlink } = linkedController(run.signal);
      const logger = options.logger?.child({ name: "codeaction.code-action", runId });
      const started = performance.now();
      const context: TurnContext = {
        options,
        messages,
        runId,
        stubsSource,
        stubSignatures,
        emit: queue.push,
        signal: controller.signal,
        logger,
        callbacks: run.callbacks,
        attempts: [],
        cleanups: new Set(),
      };
      const work = runTurn(context);
      let finished = false;
      try {
        const outcome = yield* queue.drain(work);
        const result: AgentResult = {
          messages: [...messages, new AIMessage({ content: outcome.answer })],
          runId,
          pattern: "code-action",
          status: outcome.status,
          answer: outcome.answer,
          structured: structuredValue(outcome.answer, options.answerShape),
          files: outcome.files.files,
          refusedFiles: outcome.files.refused,
          attempts: outcome.attempts,
          toolCalls: outcome.attempts.flatMap((attempt) => attempt.toolCalls),
          usage: totalUsage(outcome.attempts.map((attempt) => attempt.usage)),
          timings: { totalMs: Math.round(performance.now() - started) },
        };
        finished = true;
        yield { type: "answer", runId, result };
        return result;
      } catch (error) {
        if (!controller.signal.aborted) throw error;
        await settleAll(context.cleanups);
        throw new AbortError({ runId, attempts: [...context.attempts], cause: controller.signal.reason });
      } finally {
        unlink();
        // A consumer that stops early ends the work: the model call and the run are aborted, and
        // the turn's containers are gone and its tool calls settled before the generator returns.
        const stoppedEarly = !finished && !controller.signal.aborted;
        controller.abort(new Error("the stream was left before the answer"));
        await work.catch(() => undefined);
        if (stoppedEarly || !finished) await settleAll(context.cleanups);
      }
    },
  };
}

async function settleAll(pending: Set<Promise<unknown>>): Promise<void> {
  while (pending.size > 0) await Promise.allSettled([...pending]);
}

type TurnContext = {
  options: CodeActionTurnOptions;
  messages: BaseMessage[];
  runId: string;
  stubsSource: string;
  stubSignatures: string;
  emit: (event: AgentEvent) => void;
  signal: AbortSignal;
  logger?: Logger;
  callbacks?: CallbackManager;
  /** Every attempt that ended so far, across samples (for an AbortError). */
  attempts: Attempt[];
  /** Container removals and tool calls in flight: waited for when the turn is aborted. */
  cleanups: Set<Promise<unknown>>;
};

type SampleOutcome = { attempts: Attempt[]; answer?: string; files?: CollectedFiles };

const noFiles: CollectedFiles = { files: [], refused: [] };

async function runTurn(
  context: TurnContext,
): Promise<{ answer: string; status: "ok" | "escalated"; attempts: Attempt[]; files: CollectedFiles }> {
  const { options, runId } = context;
  const { settings } = options;
  const { conversation, question, extraInstructions } = splitConversation(context.messages);
  const instructions = [options.instructions, ...extraInstructions].filter(Boolean).join("\n\n");
  const prompt = buildCodeActionPrompt({
    instructions,
    conversation,
    question,
    stubSignatures: context.stubSignatures,
    sandboxDescription: options.sandboxDescription ?? defaultSandboxDescription,
    ...(options.networkRule ? { networkRule: options.networkRule } : {}),
    ...(options.answerShape ? { resultSchema: options.answerShape.schemaText } : {}),
  });
  const opening = [new SystemMessage(prompt.system), new HumanMessage(prompt.user)];

  const sampleNumbers = Array.from({ length: settings.samples }, (_, index) => index + 1);
  const outcomes = await Promise.all(
    sampleNumbers.map((sample) =>
      runSample(context, {
        model: options.model,
        opening,
        sample: settings.samples > 1 ? sample : undefined,
      }),
    ),
  );
  const attempts = outcomes.flatMap((outcome) => outcome.attempts);

  const decision = decide(outcomes, settings);
  if (decision.answer !== undefined) {
    const files = outcomes[decision.sampleIndex]?.files ?? noFiles;
    return { answer: decision.answer, status: "ok", attempts, files };
  }

  const samples: SampleRun[] = outcomes.map((outcome, index) => ({
    sample: index + 1,
    attempts: outcome.attempts,
    answer: outcome.answer,
    normalizedAnswer:
      outcome.answer === undefined
        ? undefined
        : normalizeAnswer(outcome.answer, { decimals: settings.decimals }),
  }));

  if (settings.escalate) {
    const candidates: EscalationCandidate[] = outcomes.map((outcome) => {
      const last = outcome.attempts.at(-1);
      return {
        program: last?.program ?? "",
        answer: outcome.answer,
        failure: last
          ? describeFailure({
              ...last,
              execTimeout: settings.execTimeout,
              maxToolCalls: settings.maxToolCalls,
            })
          : undefined,
      };
    });
    const escalationOpening = [
      new SystemMessage(prompt.system),
      new HumanMessage(buildEscalationMessage({ question, candidates })),
    ];
    context.logger?.debug(
      { samples: samples.map((sample) => sample.answer ?? null) },
      "code-action escalating",
    );
    const escalation = await runSample(context, {
      model: settings.escalate.model,
      opening: escalationOpening,
      sample: settings.samples > 1 ? settings.samples + 1 : undefined,
      escalated: true,
    });
    const all = [...attempts, ...escalation.attempts];
    if (escalation.answer !== undefined)
      return {
        answer: escalation.answer,
        status: "escalated",
        attempts: all,
        files: escalation.files ?? noFiles,
      };
    throw new AttemptsExhaustedError({ runId, attempts: all });
  }

  if (decision.anySucceeded && settings.samples > 1) throw new DisagreementError({ runId, samples });
  throw new AttemptsExhaustedError({ runId, attempts });
}

/** Strict majority of all samples (so both of two); the answer of the first sample in that group. */
function decide(
  outcomes: SampleOutcome[],
  settings: CodeActionSettings,
): { answer?: string; sampleIndex: number; anySucceeded: boolean } {
  const groups = new Map<string, number[]>();
  outcomes.forEach((outcome, index) => {
    if (outcome.answer === undefined) return;
    const key = normalizeAnswer(outcome.answer, { decimals: settings.decimals });
    groups.set(key, [...(groups.get(key) ?? []), index]);
  });
  for (const indexes of groups.values()) {
    const first = indexes[0]!;
    if (indexes.length * 2 > outcomes.length)
      return { answer: outcomes[first]?.answer, sampleIndex: first, anySucceeded: true };
  }
  return { sampleIndex: -1, anySucceeded: groups.size > 0 };
}

type SampleOptions = {
  model: ChatModelRunnable;
  opening: BaseMessage[];
  sample?: number;
  escalated?: boolean;
};

async function runSample(context: TurnContext, sampleOptions: SampleOptions): Promise<SampleOutcome> {
  const { options, runId, emit } = context;
  const { settings } = options;
  const { sample, escalated } = sampleOptions;
  const logger = context.logger?.child({
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
  });
  const modelMessages = [...sampleOptions.opening];
  const attempts: Attempt[] = [];

  for (let attemptNumber = 1; attemptNumber <= settings.maxRepairs + 1; attemptNumber += 1) {
    context.signal.throwIfAborted();
    const { attempt, run, refusal, files } = await runAttempt(context, {
      ...sampleOptions,
      attemptNumber,
      modelMessages,
      attemptsSoFar: attempts,
      logger,
    });
    attempts.push(attempt);
    context.attempts.push(attempt);
    const { status } = attempt;
    emit({
      type: "program-end",
      runId,
      attempt: attemptNumber,
      ...(sample ? { sample } : {}),
      status,
      exitCode: attempt.exitCode,
      stdoutTail: tail(attempt.stdout, streamTailCharacters),
      stderrTail: tail(attempt.stderr, streamTailCharacters),
    });
    logger?.debug(
      { attempt: attemptNumber, status, exitCode: attempt.exitCode, toolCalls: attempt.toolCalls.length },
      `code-action exit=${attempt.exitCode} status=${status} stdout=${JSON.stringify(attempt.stdout)} stderr=${JSON.stringify(attempt.stderr)}`,
    );

    if (status === "ok")
      return { attempts, answer: attempt.result, files: files ?? { files: [], refused: [] } };
    context.signal.throwIfAborted();
    if (status === "infrastructure") {
      throw new SandboxRunError({
        runId,
        attempts,
        cause: run?.infrastructureError,
        detail: run?.infrastructureError ?? "unknown",
      });
    }
    if (attemptNumber <= settings.maxRepairs) {
      const reason =
        refusal ??
        describeFailure({
          ...attempt,
          execTimeout: settings.execTimeout,
          maxToolCalls: settings.maxToolCalls,
        });
      emit({
        type: "repair-start",
        runId,
        attempt: attemptNumber + 1,
        ...(sample ? { sample } : {}),
        reason,
      });
      const toolError = [...attempt.toolCalls].reverse().find((call) => call.error)?.error;
      const repair =
        refusal === undefined
          ? buildRepairMessage({
              ...attempt,
              execTimeout: settings.execTimeout,
              maxToolCalls: settings.maxToolCalls,
              toolError,
            })
          : buildReplyRepairMessage(refusal);
      modelMessages.push(new AIMessage({ content: attempt.modelReply }), new HumanMessage(repair));
    }
  }
  return { attempts };
}

/** An attempt, its run, or (no container started) why the reply held no program to run. */
/** An attempt, with its run and the files it saved when a container ran, or why the reply was refused before one. */
type AttemptOutcome = { attempt: Attempt; run?: ProgramRun; files?: CollectedFiles; refusal?: string };

type AttemptOptions = SampleOptions & {
  attemptNumber: number;
  modelMessages: BaseMessage[];
  attemptsSoFar: Attempt[];
  logger?: Logger;
};

/**
 * One attempt as a child chain run of the turn ("attempt 2", tagged "repair" or "escalation"):
 * the model call (a child LLM run), a fresh container, the program and its tool calls (tool runs).
 */
async function runAttempt(context: TurnContext, attemptOptions: AttemptOptions): Promise<AttemptOutcome> {
  const { attemptNumber, sample, escalated } = attemptOptions;
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

async function runAttemptSteps(
  context: TurnContext,
  attemptOptions: AttemptOptions,
  callbacks: CallbackManager | undefined,
): Promise<AttemptOutcome> {
  const { options, runId, emit, signal } = context;
  const { settings } = options;
  const { attemptNumber, sample, escalated, logger } = attemptOptions;
  const attemptStarted = performance.now();
  const reply = await attemptOptions.model
    .invoke(attemptOptions.modelMessages, { signal, ...(callbacks ? { callbacks } : {}) })
    .catch((error: unknown) => {
      if (signal.aborted || CodeActionError.isInstance(error)) throw error;
      throw new ModelCallError({ runId, attempts: [...context.attempts], cause: error });
    });
  const modelMs = Math.round(performance.now() - attemptStarted);
  const replyText = textOf(reply.content);
  const read = readReplyProgram(replyText);
  const program = read.ok ? read.program : "";
  emit({ type: "program-start", runId, attempt: attemptNumber, ...(sample ? { sample } : {}), program });
  logger?.debug({ attempt: attemptNumber, program }, `code-action program:\n${program}`);
  const base = {
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
    program,
    modelReply: replyText,
    usage: usageOf(reply),
  };
  // A reply with no single program is refused here: an attempt, and no container.
  if (!read.ok) return { attempt: refusedAttempt(base, { attemptStarted, modelMs }), refusal: read.message };

  const containerStarted = performance.now();
  const session = await createSessionFor(context, attemptOptions);
  const containerStartMs = Math.round(performance.now() - containerStarted);

  const tracker = trackToolCalls(options.tools, callbacks);
  let run: ProgramRun;
  let files: CollectedFiles = noFiles;
  try {
    if (options.dataFiles?.length) await placeDataFiles(session, options.dataFiles);
    run = await runProgram({
      session,
      program,
      stubsSource: context.stubsSource,
      tools: tracker.tools,
      runId,
      execTimeout: settings.execTimeout,
      maxToolCalls: settings.maxToolCalls,
      ...(settings.maxRequestBytes === undefined ? {} : { maxRequestBytes: settings.maxRequestBytes }),
      ...(settings.maxResultBytes === undefined ? {} : { maxResultBytes: settings.maxResultBytes }),
      approval: options.approval,
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
      signal,
    });
    // Files come back only from a run that printed its answer, before its container goes. When the
    // relay saw /workspace/out empty, reading it (two execs) is skipped.
    if (run.status === "ok" && run.outputEntries !== 0)
      files = await collectFiles(session, settings.outputFiles, logger);
  } finally {
    // Removal is off the critical path: the answer does not wait for it, close() does (and an
    // aborted turn does, with the tool calls still running).
    const removal = session.close().catch((error: unknown) => {
      logger?.warn({ error }, "could not remove a code-action container; the sandbox sweep will");
    });
    options.trackRemoval?.(removal);
    trackCleanup(context, removal);
    trackCleanup(context, tracker.settled());
  }

  // runProgram's status is "ok" only for exit 0 with a RESULT line (findResult, the one parser).
  const result = run.result;
  let status: AttemptStatus = run.status;
  const check = status === "ok" && options.answerShape ? options.answerShape.check(result ?? "") : undefined;
  if (check && !check.ok) status = "invalid-result";
  const attempt: Attempt = {
    attempt: attemptNumber,
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
    program,
    modelReply: replyText,
    stdout: run.stdout,
    stderr: run.stderr,
    ...outputBytesOf(run),
    exitCode: run.exitCode,
    status,
    ...(status === "ok" ? { result } : {}),
    ...(check && !check.ok ? { result, invalidResult: check.problem } : {}),
    truncated: run.truncated,
    toolCalls: run.toolCalls,
    timings: {
      modelMs,
      containerStartMs,
      runMs: Math.round(run.runMs),
      totalMs: Math.round(performance.now() - attemptStarted),
    },
    usage: usageOf(reply),
  };
  return { attempt, run, files };
}

/**
 * `result.structured`: with a response format, the checked value (the answer passed the check in
 * its attempt); without, the answer's JSON value when it is JSON.
 */
function structuredValue(answer: string, shape: AnswerShape | undefined): unknown {
  if (shape) {
    const check = shape.check(answer);
    return check.ok ? check.value : undefined;
  }
  const parsed = parseJsonAnswer(answer);
  return parsed.ok ? parsed.value : undefined;
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
function refusedAttempt(
  base: Pick<Attempt, "attempt" | "sample" | "escalated" | "program" | "modelReply" | "usage">,
  clock: { attemptStarted: number; modelMs: number },
): Attempt {
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

function trackCleanup(context: TurnContext, pending: Promise<unknown>): void {
  const settled = pending.catch(() => undefined);
  context.cleanups.add(settled);
  void settled.finally(() => context.cleanups.delete(settled));
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
  // The signal takes a request still waiting for a pool slot out of the sandbox's line at once.
  const creating = options.sandbox.createSession({ ...(logger ? { logger } : {}), signal });
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

/** The question (the last user message), the earlier user/assistant text, and any system text. */
export function splitConversation(messages: BaseMessage[]): {
  conversation: ConversationTurn[];
  question: string;
  extraInstructions: string[];
} {
  const turns: ConversationTurn[] = [];
  const extraInstructions: string[] = [];
  for (const message of messages) {
    const type = message.getType();
    const content = textOf(message.content);
    if (type === "human") turns.push({ role: "user", content });
    else if (type === "ai" && content.trim()) turns.push({ role: "assistant", content });
    else if (type === "system") extraInstructions.push(content);
  }
  let questionIndex = -1;
  for (let index = turns.length - 1; index >= 0; index -= 1) {
    if (turns[index]?.role === "user") {
      questionIndex = index;
      break;
    }
  }
  if (questionIndex === -1) {
    throw new TypeError("A code-action turn needs a user message to answer: input.messages has none.");
  }
  return {
    conversation: turns.slice(0, questionIndex),
    question: turns[questionIndex]?.content ?? "",
    extraInstructions,
  };
}

export function textOf(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) =>
      typeof part === "string"
        ? part
        : part.type === "text" && typeof part.text === "string"
          ? part.text
          : "",
    )
    .join("");
}

export function usageOf(reply: BaseMessage): Attempt["usage"] {
  const usage = (reply as AIMessage).usage_metadata;
  if (!usage) return undefined;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens: usage.total_tokens,
  };
}

/** Token usage summed over every model call of a turn (fields no call reported stay out). */
export function totalUsage(usages: Array<Attempt["usage"]>): NonNullable<Attempt["usage"]> {
  const total: NonNullable<Attempt["usage"]> = {};
  for (const usage of usages) {
    for (const key of ["inputTokens", "outputTokens", "totalTokens"] as const) {
      const value = usage?.[key];
      if (typeof value === "number") total[key] = (total[key] ?? 0) + value;
    }
  }
  return total;
}
