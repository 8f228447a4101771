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
import { callBudget } from "./budget/call-budget.ts";
import { checkDecisionFits, type ResumeDecision, type RunState, verifyState } from "./durable/run-state.ts";
import { AbortError } from "./errors/abort-error.ts";
import { ConfigError } from "./errors/config-error.ts";
import { toMessages } from "./input-messages.ts";
import { renderStubSignatures } from "./prompt/python-stubs.ts";
import type { ThreadRegistry } from "./steps/thread-registry.ts";
import type { ToolSpec } from "./tools/tool-spec.ts";
import { observeTurn, runSignal } from "./tracing/observe-turn.ts";
import { createRunObserver, type ObserveOptions } from "./tracing/run-observer.ts";
import type { TurnRunOptions } from "./tracing/turn-run.ts";
import { fromStateMessages } from "./turn/interrupt.ts";
import type { AgentEvent, AgentInputLike, AgentResult } from "./types.ts";

/** One turn of a pattern: its steps, then its result. */
export type TurnStream = (
  messages: BaseMessage[],
  runId: string,
  run: TurnRunOptions,
) => AsyncGenerator<AgentEvent, AgentResult>;

/** A run an approval hook interrupted, continued from its checked state (code-action only). */
export type ResumeStream = (
  state: RunState,
  decision: ResumeDecision,
  run: TurnRunOptions,
) => AsyncGenerator<AgentEvent, AgentResult>;

/** What `agent.resume()` takes besides the RunnableConfig fields. */
export type ResumeOptions = Partial<RunnableConfig> & {
  /**
   * Resume a state that carries no signature (an agent built without resumeSecret). Only for a
   * state that never left your control: a forged one can make the program believe any tool result.
   */
  trustUnsignedState?: boolean;
};

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
  readonly #resume: { stream: ResumeStream; secret: string | Uint8Array | undefined } | undefined;
  readonly #shutdown: () => Promise<void>;
  readonly #observe: ObserveOptions;
  readonly #threads: ThreadRegistry | undefined;
  #shutDown = false;

  constructor(fields: {
    pattern: "code-action" | "tools";
    tools: readonly ToolSpec[];
    turn: TurnStream;
    resume?: { stream: ResumeStream; secret: string | Uint8Array | undefined };
    shutdown: () => Promise<void>;
    /** Budget, pricing and tracing settings (buildAgent's). */
    observe?: ObserveOptions;
    /** With codeAction.state "thread": the live threads. */
    threads?: ThreadRegistry;
  }) {
    super();
    this.pattern = fields.pattern;
    this.tools = fields.tools;
    this.#turn = fields.turn;
    this.#resume = fields.resume;
    this.#shutdown = fields.shutdown;
    this.#observe = fields.observe ?? {};
    this.#threads = fields.threads;
  }

  static lc_name(): string {
    return "CodeActionAgent";
  }

  /** Runs one turn and resolves with its result (`result.answer`, `result.messages.at(-1)`). */
  override invoke(
    input: AgentInputLike,
    options?: Partial<RunnableConfig>,
  ): Promise<AgentResult<Structured>> {
    return finalResult(this.#steps(input, options));
  }

  /**
   * Continues a code-action run an approval hook interrupted (docs/durable-runs.md), in this process
   * or any other: `state` is `result.interrupt.state` as stored, `decision` what the pending call
   * gets (true, false, or `{ approved, reason }`). The state's signature is checked against this
   * agent's resumeSecret before anything starts (a ResumeStateError otherwise). The program runs
   * again in a fresh container with no model call: the calls it made before are answered from the
   * state's log, the pending call gets the decision, and from there it runs live; it may be
   * interrupted again. A program whose calls differ from the log stops with a ReplayDivergenceError.
   */
  resume(
    state: unknown,
    decision: ResumeDecision,
    options: ResumeOptions = {},
  ): Promise<AgentResult<Structured>> {
    const { trustUnsignedState, ...config } = options;
    return finalResult(this.#resumeSteps(state, decision, config, trustUnsignedState === true)) as Promise<
      AgentResult<Structured>
    >;
  }

  async *#resumeSteps(
    state: unknown,
    decision: ResumeDecision,
    options: Partial<RunnableConfig>,
    trustUnsigned: boolean,
  ): AsyncGenerator<AgentEvent, AgentResult> {
    if (this.#shutDown) throw new ConfigError({ message: "this agent was shut down; build a new one" });
    const resume = this.#resume;
    if (!resume) {
      throw new ConfigError({
        message: `resume() continues code-action runs; this agent's pattern is "${this.pattern}". Build it with pattern: "code-action".`,
      });
    }
    checkDecision(decision);
    const checked = verifyState(state, { secret: resume.secret, trustUnsigned });
    checkDecisionFits(checked, decision);
    return yield* this.#runSteps(fromStateMessages(checked.messages), checked.runId, options, (run) =>
      resume.stream(checked, decision, run),
    );
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

  /**
   * The agent's tools as a code-action model reads them: one typed Python function per tool
   * (extraTools, MCP tools, shell tools) with its docstring, signatures only, in the prompt's order.
   * The text `codeaction tools` prints. Above `codeAction.discovery`'s budget the prompt carries a
   * compact index instead, and a program still imports every one of these.
   */
  describeTools(): string {
    return renderStubSignatures([...this.tools]);
  }

  /**
   * Starts thread `toId` from thread `fromId`'s state (codeAction.state "thread"): `toId`'s next
   * question re-executes `fromId`'s programs in its own interpreter (every tool call answered from
   * their logs), and from then on the two are independent. A thread already called `toId` is dropped first.
   */
  forkThread(fromId: string, toId: string): Promise<void> {
    return this.#threadsOrRefuse("forkThread").fork(fromId, toId);
  }

  /** Ends a thread (codeAction.state "thread"): its interpreter stops and its history is forgotten, stored copy included. */
  dropThread(threadId: string): Promise<void> {
    return this.#threadsOrRefuse("dropThread").drop(threadId);
  }

  #threadsOrRefuse(method: string): ThreadRegistry {
    if (this.#threads) return this.#threads;
    throw new ConfigError({
      message: `${method}() needs an agent with threads: build it with pattern: "code-action" and codeAction: { state: "thread" }`,
    });
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
    return yield* this.#runSteps(messages, runId, options, (run) => this.#turn(messages, runId, run));
  }

  /** A turn (a new one, or a resumed run) as one chain run. */
  async *#runSteps(
    messages: BaseMessage[],
    runId: string,
    options: Partial<RunnableConfig> | undefined,
    turn: (run: TurnRunOptions) => AsyncGenerator<AgentEvent, AgentResult>,
  ): AsyncGenerator<AgentEvent, AgentResult> {
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
      const threadId = config.configurable?.thread_id;
      const steps = turn({
        signal: runSignal(observer, config.signal),
        ...(threadId === undefined ? {} : { threadId: String(threadId) }),
        ...(chainRun ? { callbacks: chainRun.getChild() } : {}),
        observer,
      });
      const result = yield* observeTurn(observer, steps);
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

/** The last step's value: what invoke and resume resolve with. */
async function finalResult<Structured>(
  steps: AsyncGenerator<AgentEvent, AgentResult>,
): Promise<AgentResult<Structured>> {
  while (true) {
    const step = await steps.next();
    // `structured` holds what responseFormat checked, so it has the schema's type.
    if (step.done) return step.value as AgentResult<Structured>;
  }
}

function checkDecision(decision: unknown): void {
  if (typeof decision === "boolean") return;
  if (
    typeof decision === "object" &&
    decision !== null &&
    typeof (decision as { approved?: unknown }).approved === "boolean"
  ) {
    const { reason, call } = decision as {
      reason?: unknown;
      call?: { tool?: unknown; argsDigest?: unknown };
    };
    const callFits =
      call === undefined ||
      (typeof call === "object" &&
        call !== null &&
        typeof call.tool === "string" &&
        typeof call.argsDigest === "string");
    if ((reason === undefined || typeof reason === "string") && callFits) return;
  }
  throw new ConfigError({
    message: `resume(state, decision): decision must be true, false or { approved: boolean, reason?: string, call?: { tool: string, argsDigest: string } }, got ${JSON.stringify(decision)}`,
  });
}
