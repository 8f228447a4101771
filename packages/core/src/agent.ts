import { randomUUID } from "node:crypto";
import type { BaseMessage } from "@langchain/core/messages";
import {
  ensureConfig,
  getCallbackManagerForConfig,
  Runnable,
  type RunnableConfig,
} from "@langchain/core/runnables";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { IterableReadableStream } from "@langchain/core/utils/stream";
import { z } from "zod";
import { AbortError } from "./errors/abort-error.ts";
import { ConfigError } from "./errors/config-error.ts";
import { toMessages } from "./input-messages.ts";
import type { ToolSpec } from "./tool-spec.ts";
import { callBudget } from "./tracing/call-budget.ts";
import { observeTurn, runSignal } from "./tracing/observe-turn.ts";
import { createRunObserver, type ObserveOptions } from "./tracing/run-observer.ts";
import type { TurnRunOptions } from "./tracing/turn-run.ts";
import type { AgentEvent, AgentInputLike, AgentResult } from "./types.ts";

/** One turn of a pattern: its steps, then its result. */
export type TurnStream = (
  messages: BaseMessage[],
  runId: string,
  run: TurnRunOptions,
) => AsyncGenerator<AgentEvent, AgentResult>;

/**
 * Like LangGraph's compiled graphs, `stream()` yields the turn's steps, not chunks of its output,
 * and `asTool()` answers with text: this base loosens those two signatures so the agent can type
 * them exactly.
 */
// biome-ignore lint/suspicious/noExplicitAny: widened once here so CodeActionAgent can narrow stream() to AgentEvent and asTool() to a tool
type Widened = any;

abstract class StepStreamingRunnable<Structured> extends Runnable<AgentInputLike, AgentResult<Structured>> {
  override stream(
    input: AgentInputLike,
    options?: Partial<RunnableConfig>,
  ): Promise<IterableReadableStream<Widened>> {
    return super.stream(input, options);
  }

  override asTool(fields: { name?: string; description?: string; schema?: unknown }): Widened {
    return super.asTool(fields as never);
  }
}

/**
 * The agent: a LangChain Runnable. `invoke(input, config)` runs one turn as one chain run (its model
 * calls, attempts and tool calls are child runs) and honours `signal`, `timeout`, `callbacks`,
 * `tags`, `metadata` and `runName`; `stream()` yields the turn's steps; `batch`, `withConfig`,
 * `withRetry`, `pipe` come from Runnable; `asTool()` makes it a tool for another agent.
 */
export class CodeActionAgent<Structured = unknown> extends StepStreamingRunnable<Structured> {
  lc_namespace = ["codeaction", "agent"];
  readonly pattern: "code-action" | "tools";
  /** Every tool the agent can call (extraTools, MCP tools, shell tools). */
  readonly tools: readonly ToolSpec[];
  readonly #turn: TurnStream;
  readonly #shutdown: () => Promise<void>;
  readonly #observe: ObserveOptions;
  #shutDown = false;

  constructor(fields: {
    pattern: "code-action" | "tools";
    tools: readonly ToolSpec[];
    turn: TurnStream;
    shutdown: () => Promise<void>;
    /** Budget, pricing and tracing settings (buildAgent's). */
    observe?: ObserveOptions;
  }) {
    super();
    this.pattern = fields.pattern;
    this.tools = fields.tools;
    this.#turn = fields.turn;
    this.#shutdown = fields.shutdown;
    this.#observe = fields.observe ?? {};
  }

  static lc_name(): string {
    return "CodeActionAgent";
  }

  /** Runs one turn and resolves with its result (`result.answer`, `result.messages.at(-1)`). */
  override async invoke(
    input: AgentInputLike,
    options?: Partial<RunnableConfig>,
  ): Promise<AgentResult<Structured>> {
    const steps = this.#steps(input, options);
    while (true) {
      const step = await steps.next();
      // `structured` holds what responseFormat checked, so it has the schema's type.
      if (step.done) return step.value as AgentResult<Structured>;
    }
  }

  /**
   * Runs one turn, yielding its steps; the last is `answer`, carrying what invoke resolves with.
   * Leaving the loop early (`break`) cancels the turn: its containers are removed and its tool
   * calls settled before the loop's exit completes.
   */
  override async stream(
    input: AgentInputLike,
    options?: Partial<RunnableConfig>,
  ): Promise<IterableReadableStream<AgentEvent>> {
    const steps = this.#steps(input, options);
    return new IterableReadableStream<AgentEvent>(
      {
        async pull(controller) {
          const step = await steps.next();
          if (step.done) controller.close();
          else controller.enqueue(step.value);
        },
        async cancel() {
          await steps.return(undefined as never);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /**
   * This agent as a tool for another agent (`createAgent`, LangGraph, or a tools-pattern agent):
   * it takes `{ question }` and answers with the turn's answer text. The calling agent's signal
   * and callbacks reach it, so cancelling the outer run cancels this one and its runs nest.
   */
  override asTool(fields: { name?: string; description?: string } = {}): StructuredToolInterface {
    const name = fields.name ?? "code_action_agent";
    return tool(
      async ({ question }: { question: string }, config?: RunnableConfig) =>
        (await this.invoke({ messages: [{ role: "user", content: question }] }, config)).answer,
      {
        name,
        description:
          fields.description ??
          "Answers a question by writing and running a program with its own tools. Give the whole question.",
        schema: z.object({
          question: z.string().describe("The question or task, complete and self-contained."),
        }),
      },
    ) as unknown as StructuredToolInterface;
  }

  /** Removes the containers (waiting for pending removals) and closes the MCP servers. Idempotent. */
  close(): Promise<void> {
    this.#shutDown = true;
    return this.#shutdown();
  }

  /** @deprecated Use {@link CodeActionAgent.close}: the same call under the one disposal name. */
  shutdown(): Promise<void> {
    return this.close();
  }

  /** `await using agent = await buildAgent(...)`: the same as {@link CodeActionAgent.close}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async *#steps(
    input: AgentInputLike,
    options?: Partial<RunnableConfig>,
  ): AsyncGenerator<AgentEvent, AgentResult> {
    if (this.#shutDown) throw new ConfigError({ message: "this agent was shut down; build a new one" });
    const messages = toMessages(input);
    const runId = `run_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const config = ensureConfig({ ...options, metadata: { ...options?.metadata, codeactionRunId: runId } });
    const manager = await getCallbackManagerForConfig(config);
    const chainRun = await manager?.handleChainStart(
      this.toJSON(),
      { messages: messages.map((message) => ({ role: message.getType(), content: message.content })) },
      config.runId,
      undefined,
      undefined,
      undefined,
      config.runName ?? this.getName(),
    );
    const observer = await createRunObserver({
      ...this.#observe,
      budget: callBudget(this.#observe.budget, config.configurable?.budget),
      runId,
      pattern: this.pattern,
    });
    let ended = false;
    try {
      const turn = this.#turn(messages, runId, {
        signal: runSignal(observer, config.signal),
        ...(chainRun ? { callbacks: chainRun.getChild() } : {}),
        observer,
      });
      const result = yield* observeTurn(observer, turn);
      ended = true;
      await chainRun?.handleChainEnd({ answer: result.answer, status: result.status, runId });
      return result;
    } catch (error) {
      ended = true;
      await chainRun?.handleChainError(error);
      throw error;
    } finally {
      // Left early (a `break` out of stream()): the turn was cancelled.
      if (!ended)
        await chainRun?.handleChainError(
          new AbortError({ runId, attempts: [], cause: "the stream was left before the answer" }),
        );
    }
  }
}
