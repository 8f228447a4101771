import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { AbortError } from "../errors/abort-error.ts";
import { type AnswerShape, parseJsonAnswer } from "../structured-answer.ts";
import { RunObserver } from "../tracing/run-observer.ts";
import { linkedController, type TurnRunOptions } from "../tracing/turn-run.ts";
import type { AgentEvent, AgentResult } from "../types.ts";
import { agreeOrEscalate, type TurnOutcome } from "./agreement.ts";
import { createEventQueue } from "./event-queue.ts";
import { buildCodeActionPrompt, defaultSandboxDescription } from "./prompt.ts";
import { buildStubs, renderStubsModule } from "./python-stubs.ts";
import { runSample } from "./repair-loop.ts";
import { defaultDiscoverySettings, planDiscovery, renderDiscoverySection } from "./tool-index.ts";
import { type CodeActionTurnOptions, settleAll, type TurnContext } from "./turn-context.ts";
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
};

/**
 * One code-action turn: the model writes a program, it runs in a fresh container, failures are
 * repaired, and with `samples` > 1 independent programs must agree. `run.signal` cancels it at any
 * stage: the turn then removes its containers, waits for its tool calls, and throws an AbortError.
 */
export function createCodeActionTurn(options: CodeActionTurnOptions): CodeActionTurn {
  const stubsSource = renderStubsModule(options.tools);
  const stubs = buildStubs(options.tools);
  const stubSignatures = stubs.map((stub) => stub.signature).join("\n\n");
  const discovery = planDiscovery(
    options.tools,
    stubs,
    options.settings.discovery ?? defaultDiscoverySettings,
  );

  return {
    async *stream(messages, runId, run = {}) {
      const queue = createEventQueue<AgentEvent>();
      const { controller, unlink } = linkedController(run.signal);
      const started = performance.now();
      const context: TurnContext = {
        options,
        messages,
        runId,
        stubsSource,
        stubSignatures,
        ...(discovery ? { discovery } : {}),
        emit: queue.push,
        signal: controller.signal,
        logger: options.logger?.child({ name: "codeaction.code-action", runId }),
        callbacks: run.callbacks,
        observer: run.observer ?? new RunObserver({ runId }),
        attempts: [],
        cleanups: new Set(),
      };
      const work = runTurn(context);
      let finished = false;
      try {
        const outcome = yield* queue.drain(work);
        const result = turnResult(context, outcome, started);
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
        controller.abort(new Error("the stream was left before the answer"));
        await work.catch(() => undefined);
        if (!finished) await settleAll(context.cleanups);
      }
    },
  };
}

/** The prompt, every sample at once, then the agreement between them (or the escalation). */
async function runTurn(context: TurnContext): Promise<TurnOutcome> {
  const { options } = context;
  const { settings } = options;
  const { conversation, question, extraInstructions } = splitConversation(context.messages);
  const instructions = [options.instructions, ...extraInstructions].filter(Boolean).join("\n\n");
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
  });
  const system = new SystemMessage(prompt.system);
  const opening = [system, new HumanMessage(prompt.user)];
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
  return agreeOrEscalate(context, outcomes, { system, question });
}

/** The AgentResult of a turn that answered. */
function turnResult(context: TurnContext, outcome: TurnOutcome, started: number): AgentResult {
  const { messages, runId, options } = context;
  return {
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
    usage: context.observer.usage(),
    timings: { totalMs: Math.round(performance.now() - started) },
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
