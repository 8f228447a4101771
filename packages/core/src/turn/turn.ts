import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { defaultDiscoverySettings, planDiscovery, renderDiscoverySection } from "../discovery/tool-index.ts";
import { sha256Hex } from "../durable/canonical-json.ts";
import { seededStubs } from "../durable/determinism.ts";
import type { ResumeDecision, RunState } from "../durable/run-state.ts";
import { consumeState, processUsedStates } from "../durable/used-states.ts";
import { AbortError } from "../errors/abort-error.ts";
import { buildCodeActionPrompt, defaultSandboxDescription } from "../prompt/prompt.ts";
import { buildStubs, renderStubsModule } from "../prompt/python-stubs.ts";
import { StepSpace } from "../steps/step-space.ts";
import { interpreterNote, stepsRules } from "../steps/steps-prompt.ts";
import { leaseThread, type ThreadRegistry } from "../steps/thread-registry.ts";
import { type AnswerShape, parseJsonAnswer } from "../structured-answer.ts";
import { RunObserver } from "../tracing/run-observer.ts";
import { linkedController, type TurnRunOptions } from "../tracing/turn-run.ts";
import type { AgentEvent, AgentResult, ThreadReport } from "../types.ts";
import { agreeOrEscalate, type TurnOutcome } from "./agreement.ts";
import { createEventQueue } from "./event-queue.ts";
import { fromStateMessages, interruptedResult } from "./interrupt.ts";
import { runSample } from "./repair-loop.ts";
import { checkResumable, resumeTurn } from "./resume-turn.ts";
import { type CodeActionTurnOptions, settleAll, type TurnContext, trackCleanup } from "./turn-context.ts";
import { splitConversation } from "./turn-messages.ts";

// One code-action turn, in four files along its seams: this one (the turn: prompt, samples, the
// result), repair-loop.ts (a sample's attempts and repairs), attempt.ts (one model call and one
// program in a fresh container), agreement.ts (the samples' majority and the escalation).
export type { CodeActionSettings, CodeActionTurnOptions } from "./turn-context.ts";

export type CodeActionTurn = {
  stream(
    messages: BaseMessage[],
    runId: string,
    run?: TurnRunOptions,
  ): AsyncGenerator<AgentEvent, AgentResult>;
  /** Continues an interrupted run from its checked state (turn/resume-turn.ts). */
  resume(
    state: RunState,
    decision: ResumeDecision,
    run?: TurnRunOptions,
  ): AsyncGenerator<AgentEvent, AgentResult>;
};

/**
 * One code-action turn: the model writes a program, it runs in a fresh container, failures are
 * repaired, and with `samples` > 1 independent programs must agree. `run.signal` cancels it at any
 * stage: the turn then removes its containers, waits for its tool calls, and throws an AbortError.
 * An approval hook's "interrupt" ends it the same way, with an interrupted result instead.
 */
export function createCodeActionTurn(
  options: CodeActionTurnOptions,
  threads?: ThreadRegistry,
): CodeActionTurn {
  const stubsSource = renderStubsModule(options.tools);
  const stubsDigest = sha256Hex(stubsSource);
  const stubs = buildStubs(options.tools);
  const stubSignatures = stubs.map((stub) => stub.signature).join("\n\n");
  const discovery = planDiscovery(
    options.tools,
    stubs,
    options.settings.discovery ?? defaultDiscoverySettings,
  );
  const turn = (messages: BaseMessage[], runId: string, seed: string) => ({
    options,
    messages,
    runId,
    seed,
    stubsSource: seededStubs(stubsSource, seed),
    rawStubsSource: stubsSource,
    stubsDigest,
    stubSignatures,
    ...(discovery ? { discovery } : {}),
  });

  return {
    stream: (messages, runId, run = {}) =>
      driveTurn(turn(messages, runId, runId), run, (context) => runTurn(context, run, threads)),
    resume(state, decision, run = {}) {
      checkResumable(state, { stubsDigest, toolNames: options.tools.map((tool) => tool.name) });
      const messages = fromStateMessages(state.messages);
      // Consumed once the state passed every check, before its container starts: used once.
      return driveTurn(turn(messages, state.runId, state.seed), run, async (context) => {
        await consumeState(state, options.usedStates ?? processUsedStates);
        return resumeTurn(context, state, decision);
      });
    },
  };
}

type TurnBasis = Pick<
  TurnContext,
  | "options"
  | "messages"
  | "runId"
  | "seed"
  | "stubsSource"
  | "rawStubsSource"
  | "stubsDigest"
  | "stubSignatures"
  | "discovery"
>;

/** Runs `work` as a turn: its events as they come, then its result; cancelled, stopped or interrupted cleanly. */
async function* driveTurn(
  basis: TurnBasis,
  run: TurnRunOptions,
  work: (context: TurnContext) => Promise<TurnOutcome>,
): AsyncGenerator<AgentEvent, AgentResult> {
  const { runId } = basis;
  const queue = createEventQueue<AgentEvent>();
  const { controller, unlink } = linkedController(run.signal);
  const started = performance.now();
  const context: TurnContext = {
    ...basis,
    emit: queue.push,
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    logger: basis.options.logger?.child({ name: "codeaction.code-action", runId }),
    callbacks: run.callbacks,
    observer: run.observer ?? new RunObserver({ runId }),
    attempts: [],
    cleanups: new Set(),
  };
  const working = work(context);
  let finished = false;
  try {
    const outcome = yield* queue.drain(working);
    const result = turnResult(context, outcome, started);
    finished = true;
    yield { type: "answer", runId, result };
    return result;
  } catch (error) {
    if (!controller.signal.aborted) throw error;
    await settleAll(context.cleanups);
    const stopped = context.stopped;
    if (stopped?.stop.kind === "diverged" || stopped?.stop.kind === "refused") throw stopped.stop.error;
    if (stopped?.stop.kind !== "interrupt") {
      throw new AbortError({ runId, attempts: [...context.attempts], cause: controller.signal.reason });
    }
    const result = interruptedResult(context, { ...stopped, stop: stopped.stop }, started);
    finished = true;
    yield { type: "answer", runId, result };
    return result;
  } finally {
    unlink();
    // A consumer that stops early ends the work: the model call and the run are aborted, and
    // the turn's containers are gone and its tool calls settled before the generator returns.
    controller.abort(new Error("the stream was left before the answer"));
    await working.catch(() => undefined);
    if (!finished) await settleAll(context.cleanups);
  }
}

/** The run's interpreter space (steps or a thread), then its samples with the prompt. */
async function runTurn(
  context: TurnContext,
  run: TurnRunOptions,
  threads: ThreadRegistry | undefined,
): Promise<TurnOutcome> {
  const { settings } = context.options;
  const stepsOn = (settings.maxSteps ?? 1) > 1 || settings.state === "thread";
  if (!stepsOn) return runSamples(context, undefined);
  const lease = settings.state === "thread" ? await leaseThread(threads, run.threadId, context) : undefined;
  const space = lease?.space ?? new StepSpace();
  space.beginRun();
  try {
    if (lease) context.thread = await threadReadied(context, lease.threadId, space);
    return await runSamples(context, space);
  } finally {
    if (lease) await lease.release(context);
    else space.release(context);
  }
}

/**
 * A thread's interpreter made ready before its question's prompt: one that is not alive but has a
 * history is restored now, so the prompt can say what it holds, or that it starts afresh.
 */
async function threadReadied(context: TurnContext, id: string, space: StepSpace): Promise<ThreadReport> {
  if (space.history.length > 0 && !space.interpreter?.alive) {
    await space.ready(context, { attemptNumber: 1, attemptsSoFar: [] });
  }
  return {
    id,
    ...(space.restored ? { restored: space.restored } : {}),
    ...(space.lost ? { startedAfresh: space.lost } : {}),
  };
}

/** The prompt, every sample at once, then the agreement between them (or the escalation). */
async function runSamples(context: TurnContext, space: StepSpace | undefined): Promise<TurnOutcome> {
  const { options } = context;
  const { settings } = options;
  const { conversation, question, extraInstructions } = splitConversation(context.messages);
  const instructions = [options.instructions, ...extraInstructions].filter(Boolean).join("\n\n");
  const thread = settings.state === "thread";
  const note = space && thread ? interpreterNote({ summary: space.summary, lost: space.lost }) : undefined;
  if (space && thread) space.lost = undefined;
  const prompt = buildCodeActionPrompt({
    instructions,
    conversation,
    question,
    stubSignatures: context.stubSignatures,
    ...(context.discovery
      ? { functionsSection: renderDiscoverySection(context.discovery, options.tools.length) }
      : {}),
    sandboxDescription: options.sandboxDescription ?? defaultSandboxDescription,
    ...(options.networkRule ? { networkRule: options.networkRule } : {}),
    ...(options.answerShape ? { resultSchema: options.answerShape.schemaText } : {}),
    ...(space ? { stepsSection: stepsRules({ maxSteps: settings.maxSteps ?? 1, thread }) } : {}),
    ...(note ? { interpreterNote: note } : {}),
  });
  const system = new SystemMessage(prompt.system);
  const opening = [system, new HumanMessage(prompt.user)];
  const sampleNumbers = Array.from({ length: settings.samples }, (_, index) => index + 1);
  const outcomes = await Promise.all(
    sampleNumbers.map((sample) => {
      const running = runSample(context, {
        model: options.model,
        opening,
        sample: settings.samples > 1 ? sample : undefined,
        ...(space ? { space } : {}),
      });
      // A stopped turn waits for every sample, not only the one that stopped it: a sample still
      // starting its container hands the container's removal over only when it ends.
      trackCleanup(context, running);
      return running;
    }),
  );
  return agreeOrEscalate(context, outcomes, { system, question, space });
}

/** The AgentResult of a turn that answered. */
function turnResult(context: TurnContext, outcome: TurnOutcome, started: number): AgentResult {
  const { messages, runId, options } = context;
  return {
    messages: [...messages, new AIMessage({ content: outcome.answer })],
    runId,
    pattern: "code-action",
    status: outcome.status === "ok" ? "answered" : "escalated",
    answer: outcome.answer,
    structured: structuredValue(outcome.answer, options.answerShape),
    files: outcome.files.files,
    refusedFiles: outcome.files.refused,
    attempts: outcome.attempts,
    toolCalls: outcome.attempts.flatMap((attempt) => attempt.toolCalls),
    usage: context.observer.usage(),
    timings: { totalMs: Math.round(performance.now() - started) },
    ...(context.thread ? { thread: context.thread } : {}),
  };
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
