import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import {
  type Budget,
  type BudgetLimit,
  type CallTokens,
  type Pricing,
  type RunUsage,
  UsageMeter,
} from "../budget/usage.ts";
import { BudgetExceededError } from "../errors/budget-exceeded-error.ts";
import { ConfigError } from "../errors/config-error.ts";
import { modelName } from "../model/model.ts";
import type { AgentEvent } from "../types.ts";
import { LiveOutput, type OutputSource } from "./live-output.ts";
import { findTracer } from "./otel.ts";
import { providerName } from "./provider-name.ts";
import { type Attributes, type OpenSpan, RunSpans } from "./run-spans.ts";

/** The observability settings of an agent (`buildAgent({ budget, pricing, tracing })`). */
export type ObserveOptions = {
  budget?: Budget;
  pricing?: Pricing;
  tracing?: { recordContent?: boolean; maxContentChars?: number };
};

/** Where a model call or a program belongs in the run. */
export type StepInfo = { attempt?: number; sample?: number; escalated?: boolean; step?: number };

/**
 * What one run is watched by: its usage, its budget (a stop aborts `signal` with the reason) and,
 * when an OpenTelemetry SDK is registered, its spans. Hooks in the turn report each model call,
 * program and tool call to it.
 */
export class RunObserver {
  readonly runId: string;
  readonly #meter: UsageMeter;
  readonly #budget: Budget;
  readonly #controller = new AbortController();
  readonly #started = performance.now();
  readonly #wallTimer: NodeJS.Timeout | undefined;
  readonly spans: RunSpans | undefined;
  #stop: Error | undefined;
  /** The run's `program-output` events, made on the first output. */
  #live: LiveOutput | undefined;
  /** When each program still running started: its time so far counts in a usage taken meanwhile. */
  readonly #running = new Set<{ started: number }>();

  constructor(options: ObserveOptions & { runId: string; spans?: RunSpans }) {
    this.runId = options.runId;
    this.#meter = new UsageMeter(options.pricing);
    this.#budget = options.budget ?? {};
    this.spans = options.spans;
    const wall = this.#budget.maxWallSeconds;
    if (wall !== undefined) {
      // At the limit the run stops where it is: the abort kills its program and removes its containers.
      this.#wallTimer = setTimeout(() => this.#halt(this.#budgetError("maxWallSeconds", wall)), wall * 1000);
      this.#wallTimer.unref();
    }
  }

  /** Aborted with the reason (a BudgetExceededError) when the run must stop. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the run was stopped, when it was. */
  get stopReason(): Error | undefined {
    return this.#stop;
  }

  /** The totals so far; a program still running counts its sandbox time up to now (a stop mid-program). */
  usage(): RunUsage {
    const usage = this.#meter.snapshot();
    const now = performance.now();
    let runningMs = 0;
    for (const program of this.#running) runningMs += now - program.started;
    if (runningMs > 0) usage.sandboxSeconds = Math.round(usage.sandboxSeconds * 1000 + runningMs) / 1000;
    return usage;
  }

  /** One model call: checked against the budget before, counted (and priced) after. */
  async modelCall<Reply extends BaseMessage>(
    model: unknown,
    step: StepInfo,
    call: () => Promise<Reply>,
  ): Promise<Reply> {
    this.#checkBeforeModelCall();
    const requested = modelName(model);
    const span = this.spans?.start(
      `chat ${requested}`,
      this.spans.agent.context,
      {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": providerName(model),
        "gen_ai.request.model": requested,
        ...stepAttributes(step),
      },
      "client",
    );
    let reply: Reply;
    try {
      reply = await call();
    } catch (error) {
      span?.end(error);
      throw error;
    }
    const tokens = tokensOf(reply);
    const names = modelNamesOf(reply, requested);
    this.#meter.addModelCall(names, tokens);
    span?.set(chatAttributes(reply, tokens, names));
    span?.end();
    this.#checkAfterModelCall(names, tokens);
    return reply;
  }

  attemptStarted(): void {
    this.#meter.addAttempt();
  }

  /** One program in the sandbox: its span (the parent of its tool calls) and its time. */
  program(step: StepInfo & { program: string; runtime?: string; warm?: boolean }): ProgramObservation {
    // Not a GenAI operation the conventions know: our own namespace, no gen_ai.operation.name.
    const span = this.spans?.start("execute_program", this.spans.agent.context, {
      "codeaction.operation.name": "execute_program",
      ...stepAttributes(step),
      "codeaction.sandbox.runtime": step.runtime,
      "codeaction.sandbox.warm": step.warm,
      "codeaction.program.text": this.spans.content(() => step.program),
    });
    const running = { started: performance.now() };
    this.#running.add(running);
    return {
      span,
      end: (run) => {
        this.#running.delete(running);
        this.#meter.addSandboxTime(run.runMs);
        if (step.attempt !== undefined) this.#live?.flush({ attempt: step.attempt, sample: step.sample });
        span?.set({
          "codeaction.program.status": run.status,
          "codeaction.program.exit_code": run.exitCode ?? undefined,
          "codeaction.program.duration_ms": Math.round(run.runMs),
        });
        span?.end(run.status === "ok" ? undefined : new ProgramFailed(run.status, run.exitCode));
      },
      fail: (error) => {
        // Stopped or failed mid-run (a budget, a cancel): the time it had in the sandbox still counts.
        if (this.#running.delete(running)) this.#meter.addSandboxTime(performance.now() - running.started);
        span?.end(error);
      },
    };
  }

  /** A chunk of a program's output: `program-output` events, bounded per run. */
  programOutput(emit: (event: AgentEvent) => void, source: OutputSource, chunk: Buffer): void {
    this.#live ??= new LiveOutput({ runId: this.runId, emit });
    this.#live.feed(source, chunk);
  }

  /** Every tool event of the run: each result counts one tool call (refused ones too). */
  toolEvent(event: AgentEvent): void {
    if (event.type === "tool-result") this.#meter.addToolCall();
  }

  /** Ends the agent span with the run's outcome and stops the wall clock. */
  finish(error?: unknown): void {
    if (this.#wallTimer) clearTimeout(this.#wallTimer);
    const usage = this.usage();
    this.spans?.agent.set({
      "gen_ai.usage.input_tokens": usage.inputTokens,
      "gen_ai.usage.output_tokens": usage.outputTokens,
      "codeaction.usage.model_calls": usage.modelCalls,
      "codeaction.usage.tool_calls": usage.toolCalls,
      "codeaction.usage.attempts": usage.attempts,
      "codeaction.usage.sandbox_seconds": usage.sandboxSeconds,
      "codeaction.usage.cost_usd": usage.costUsd,
    });
    this.spans?.agent.end(error);
  }

  #checkBeforeModelCall(): void {
    if (this.#stop) throw this.#stop;
    const { maxModelCalls, maxTokens, maxCostUsd } = this.#budget;
    const usage = this.#meter.snapshot();
    if (maxModelCalls !== undefined && usage.modelCalls + 1 > maxModelCalls)
      this.#stopAt("maxModelCalls", maxModelCalls);
    if (maxTokens !== undefined && (usage.totalTokens ?? 0) >= maxTokens)
      this.#stopAt("maxTokens", maxTokens);
    if (maxCostUsd !== undefined && (usage.costUsd ?? 0) >= maxCostUsd)
      this.#stopAt("maxCostUsd", maxCostUsd);
  }

  /** A reply that took the run past a limit stops it before anything else runs; unknown figures fail closed. */
  #checkAfterModelCall(names: string[], tokens: CallTokens | undefined): void {
    const { maxTokens, maxCostUsd } = this.#budget;
    if (maxTokens === undefined && maxCostUsd === undefined) return;
    if (tokens?.inputTokens === undefined || tokens.outputTokens === undefined) {
      this.#stopWith(unknownFigure("the model reported no token usage (usage_metadata)", names[0]));
    }
    if (maxCostUsd !== undefined && !this.#meter.priced(names)) {
      this.#stopWith(
        unknownFigure(`pricing has no entry for ${names.map((name) => `'${name}'`).join(" or ")}`, names[0]),
      );
    }
    const usage = this.#meter.snapshot();
    if (maxTokens !== undefined && (usage.totalTokens ?? 0) > maxTokens) this.#stopAt("maxTokens", maxTokens);
    if (maxCostUsd !== undefined && (usage.costUsd ?? 0) > maxCostUsd) this.#stopAt("maxCostUsd", maxCostUsd);
  }

  #stopAt(limit: BudgetLimit, budget: number): never {
    this.#stopWith(this.#budgetError(limit, budget));
  }

  #budgetError(limit: BudgetLimit, budget: number): BudgetExceededError {
    const elapsedSeconds = (performance.now() - this.#started) / 1000;
    return new BudgetExceededError({ runId: this.runId, limit, budget, usage: this.usage(), elapsedSeconds });
  }

  /** Stops the run: aborts its signal, so its programs are killed and its containers removed. */
  #halt(error: Error): void {
    this.#stop ??= error;
    if (!this.#controller.signal.aborted) this.#controller.abort(this.#stop);
  }

  /** Stops the run and throws why, from the step that found the limit. */
  #stopWith(error: Error): never {
    this.#halt(error);
    throw this.#stop;
  }
}

/** An execute_program span, and the two ways it ends. */
export type ProgramObservation = {
  span: OpenSpan | undefined;
  end(run: { status: string; exitCode: number | null; runMs: number }): void;
  fail(error: unknown): void;
};

/** The status of a program that did not end "ok", recorded on its span. */
class ProgramFailed extends Error {
  readonly code: string;
  constructor(status: string, exitCode: number | null) {
    super(`the program ended with status ${status}${exitCode === null ? "" : ` (exit code ${exitCode})`}`);
    this.name = "ProgramFailed";
    this.code = status;
  }
}

/** A new run's observer; it traces only when an OpenTelemetry tracer provider is registered. */
export async function createRunObserver(
  options: ObserveOptions & { runId: string; pattern: "code-action" | "tools" },
): Promise<RunObserver> {
  if (options.budget?.maxCostUsd !== undefined && !options.pricing) {
    throw new ConfigError({
      message:
        "budget.maxCostUsd needs prices: none is built in. Pass pricing: { '<model>': { inputPerMTok, outputPerMTok } } to buildAgent, or remove maxCostUsd.",
    });
  }
  const found = await findTracer();
  const spans = found
    ? new RunSpans({
        ...found,
        content: {
          recordContent: options.tracing?.recordContent ?? false,
          maxContentChars: options.tracing?.maxContentChars ?? 4000,
        },
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": "codeaction",
          "codeaction.run_id": options.runId,
          "codeaction.pattern": options.pattern,
        },
      })
    : undefined;
  return new RunObserver({ ...options, ...(spans ? { spans } : {}) });
}

function unknownFigure(problem: string, model: string | undefined): ConfigError {
  return new ConfigError({
    message: `budget: ${problem} for model '${model ?? "unknown"}', so the run cannot be held to maxTokens or maxCostUsd and was stopped. Add the model to pricing (for maxCostUsd) or use a model that reports usage, or remove the limit.`,
  });
}

function tokensOf(reply: BaseMessage): CallTokens | undefined {
  const usage = (reply as AIMessage).usage_metadata;
  if (!usage) return undefined;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens: usage.total_tokens,
  };
}

/** The names a price may be listed under: the model the reply names, then the one asked for. */
function modelNamesOf(reply: BaseMessage, requested: string): string[] {
  const metadata = (reply.response_metadata ?? {}) as Record<string, unknown>;
  const reported = [metadata.model_name, metadata.model].filter(
    (name): name is string => typeof name === "string",
  );
  return [...new Set([...reported, requested])];
}

function chatAttributes(reply: BaseMessage, tokens: CallTokens | undefined, names: string[]): Attributes {
  const metadata = (reply.response_metadata ?? {}) as Record<string, unknown>;
  const finish = metadata.finish_reason ?? metadata.stop_reason;
  return {
    "gen_ai.response.model": names[0],
    "gen_ai.usage.input_tokens": tokens?.inputTokens,
    "gen_ai.usage.output_tokens": tokens?.outputTokens,
    "gen_ai.response.finish_reasons": typeof finish === "string" ? [finish] : undefined,
  };
}

function stepAttributes(step: StepInfo): Attributes {
  return {
    "codeaction.attempt": step.attempt,
    "codeaction.sample": step.sample,
    "codeaction.escalated": step.escalated,
    "codeaction.step": step.step,
  };
}
