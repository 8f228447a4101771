import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { Logger } from "pino";
import { AbortError } from "../errors/abort-error.ts";
import { CodeActionError } from "../errors/code-action-error.ts";
import { MaxIterationsError } from "../errors/max-iterations-error.ts";
import { ModelCallError } from "../errors/model-call-error.ts";
import { ToolCallingUnsupportedError } from "../errors/tool-calling-unsupported-error.ts";
import { bindToolsThrough, type ChatModelRunnable, modelName } from "../model/model.ts";
import { type AnswerShape, parseJsonAnswer } from "../structured-answer.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { ModelCallEvents } from "../tracing/model-events.ts";
import { RunObserver } from "../tracing/run-observer.ts";
import { type ToolCallTracker, trackToolCalls } from "../tracing/tool-runs.ts";
import { linkedController, type TurnRunOptions } from "../tracing/turn-run.ts";
import type { AgentEvent, AgentResult, ApprovalHook, ToolCallRecord } from "../types.ts";
import { callTool } from "./call-tool.ts";
import { createToolCatalog, type ToolCatalog } from "./tool-definitions.ts";
import { createToolTracer, type ToolTracer } from "./trace-tools.ts";

export const defaultMaxIterations = 25;

/** Options of `createToolsRunner`: the model, the tools, and the loop's limits and hooks. */
export type ToolsRunnerOptions = {
  /** A chat model with tool calling, or a Runnable wrapping one (withRetry, withFallbacks, withConfig). */
  model: ChatModelRunnable;
  tools: ToolSpec[];
  /** Gates every call; a denial reaches the model as "Tool call denied: <reason>". */
  approval?: ApprovalHook;
  /** Print each call and a shortened result (logger info, or stderr without a logger). */
  traceTools?: boolean;
  /** Model turns before the run ends with MaxIterationsError (default 25). */
  maxIterations?: number;
  /** System text put before the conversation for the model (not part of the result's messages). */
  instructions?: string;
  /** `responseFormat`, compiled: the final answer must be JSON of this shape, or it is sent back. */
  answerShape?: AnswerShape;
  logger?: Logger;
};

/** The tools pattern's loop on its own (what `buildAgent({ pattern: "tools" })` runs). */
export type ToolsRunner = {
  stream(
    messages: BaseMessage[],
    runId: string,
    run?: TurnRunOptions,
  ): AsyncGenerator<AgentEvent, AgentResult>;
};

/** What a runner fixes when it is created: the bound model, the tools, the limits and hooks. */
type ToolsLoopSettings = {
  bound: ChatModelRunnable;
  tools: ToolSpec[];
  catalog: ToolCatalog;
  availableTools: string[];
  /** The system text: the user's instructions and, with an answer shape, its rule. */
  instructions: string;
  maxIterations: number;
  answerShape: AnswerShape | undefined;
  approval: ApprovalHook | undefined;
  tracer: ToolTracer | undefined;
  logger: Logger | undefined;
};

/** One stream's options, with what the loop shares with the stream around it. */
type LoopRun = TurnRunOptions & {
  observer: RunObserver;
  signal: AbortSignal;
  tracker: ToolCallTracker;
  toolCalls: ToolCallRecord[];
};

/** One stream's state: the conversation so far and the calls made. */
type LoopState = {
  runId: string;
  run: LoopRun;
  started: number;
  conversation: BaseMessage[];
  /** The tools as the tracker wraps them, by name. */
  tracked: Map<string, ToolSpec>;
  logger: Logger | undefined;
  /** Calls given an id by the loop so far (for the ids of calls the provider sent without one). */
  callCount: number;
};

/**
 * The tools pattern: the model calls tools through its native tool calling, results go
 * back as tool messages, until it answers in text or `maxIterations` model turns pass.
 */
export function createToolsRunner(options: ToolsRunnerOptions): ToolsRunner {
  const settings = loopSettings(options);
  return {
    async *stream(messages, runId, run = {}) {
      const { controller, unlink } = linkedController(run.signal);
      const observer = run.observer ?? new RunObserver({ runId });
      const tracker = trackToolCalls(settings.tools, run.callbacks, { spans: observer.spans, observer });
      // The calls made so far, kept here so that an abort can report them.
      const toolCalls: ToolCallRecord[] = [];
      let answered = false;
      try {
        const result = yield* runLoop(settings, messages, runId, {
          ...run,
          observer,
          signal: controller.signal,
          tracker,
          toolCalls,
        });
        answered = true;
        return result;
      } catch (error) {
        if (!controller.signal.aborted) throw error;
        await tracker.settled();
        throw new AbortError({ runId, attempts: [], toolCalls, cause: controller.signal.reason });
      } finally {
        unlink();
        if (!answered) controller.abort(new Error("the stream was left before the answer"));
        await tracker.settled();
      }
    },
  };
}

/** Checks the options and binds the tools (and the answer's shape) to the model. */
function loopSettings(options: ToolsRunnerOptions): ToolsLoopSettings {
  const { model, tools, answerShape } = options;
  const instructions = [options.instructions, answerShape ? answerShapeInstructions(answerShape) : undefined]
    .filter(Boolean)
    .join("\n\n");
  const maxIterations = options.maxIterations ?? defaultMaxIterations;
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new RangeError(`maxIterations must be a whole number of at least 1, got ${maxIterations}.`);
  }
  const catalog = createToolCatalog(tools);
  // Tools, and the answer's shape where the provider takes it natively (checked as text either way).
  const bound =
    catalog.definitions.length > 0
      ? bindToolsThrough(model, catalog.definitions, answerShape?.schema)
      : answerShape
        ? (bindToolsThrough(model, [], answerShape.schema) ?? model)
        : model;
  if (!bound) throw new ToolCallingUnsupportedError({ modelName: modelName(model) });
  return {
    bound,
    tools,
    catalog,
    availableTools: [...catalog.byModelName.keys()],
    instructions,
    maxIterations,
    answerShape,
    approval: options.approval,
    tracer: options.traceTools ? createToolTracer({ logger: options.logger }) : undefined,
    logger: options.logger,
  };
}

/** The model turns of one stream: each reply either answers or asks for tools, which run in order. */
async function* runLoop(
  settings: ToolsLoopSettings,
  messages: BaseMessage[],
  runId: string,
  run: LoopRun,
): AsyncGenerator<AgentEvent, AgentResult> {
  const state: LoopState = {
    runId,
    run,
    started: performance.now(),
    conversation: [...messages],
    tracked: new Map(run.tracker.tools.map((tool) => [tool.name, tool])),
    logger: settings.logger?.child({ runId, component: "tools-pattern" }),
    callCount: 0,
  };
  const { maxIterations } = settings;
  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    const events = new ModelCallEvents(runId, settings.bound, {});
    yield events.start();
    let reply: AIMessage;
    try {
      reply = await askModel(settings, state);
    } catch (error) {
      yield events.end(undefined);
      throw error;
    }
    yield events.end(reply);
    const requested = requestedCalls(reply);
    state.logger?.debug({ iteration, toolCalls: requested.length }, "model replied");

    if (requested.length === 0) {
      const result = acceptAnswer(settings, state, reply, iteration);
      if (result === undefined) continue;
      yield { type: "answer", runId, result };
      return result;
    }
    if (iteration === maxIterations) {
      // The model's last allowed turn still asks for tools: they are not run, since
      // nobody would read their results.
      throw new MaxIterationsError({
        maxIterations,
        pendingTools: requested.map((call) => call.name),
        messages: [...state.conversation, reply],
        toolCalls: run.toolCalls,
      });
    }
    // Every call gets an id, so each tool message answers exactly one call.
    const calls = requested.map((call) => ({ ...call, id: call.id ?? `call_${runId}_${++state.callCount}` }));
    state.conversation.push(withCallIds(reply, calls));
    for (const call of calls) yield* runCall(settings, state, call);
  }
  // Unreachable: the last iteration either answers or throws.
  throw new Error("tools runner ended without an answer");
}

/** One model turn over the conversation; a failure that is not the caller's becomes ModelCallError. */
async function askModel(settings: ToolsLoopSettings, state: LoopState): Promise<AIMessage> {
  const { instructions } = settings;
  const { run, runId } = state;
  const prompt = instructions ? [new SystemMessage(instructions), ...state.conversation] : state.conversation;
  return (await run.observer
    .modelCall(settings.bound, {}, () =>
      settings.bound.invoke(prompt, {
        signal: run.signal,
        ...(run.callbacks ? { callbacks: run.callbacks } : {}),
      }),
    )
    .catch((error: unknown) => {
      if (run.signal.aborted || CodeActionError.isInstance(error)) throw error;
      throw new ModelCallError({ runId, attempts: [], cause: error });
    })) as AIMessage;
}

/**
 * A reply without tool calls: the result, or undefined when its shape was refused and the model
 * answers again (the refusal is in the conversation). A refused shape on the last turn throws.
 */
function acceptAnswer(
  settings: ToolsLoopSettings,
  state: LoopState,
  reply: AIMessage,
  iteration: number,
): AgentResult | undefined {
  const { maxIterations } = settings;
  const { conversation, run } = state;
  conversation.push(reply);
  const check = settings.answerShape?.check(reply.text);
  if (check && !check.ok && iteration < maxIterations) {
    // A wrong shape is sent back like a failed tool call: the model answers again.
    state.logger?.debug({ iteration, problem: check.problem }, "answer refused by responseFormat");
    conversation.push(new HumanMessage(answerRepairMessage(check.problem)));
    return undefined;
  }
  if (check && !check.ok) {
    throw new MaxIterationsError({
      maxIterations,
      pendingTools: [],
      messages: conversation,
      toolCalls: run.toolCalls,
    });
  }
  const parsed = check ? check : parseJsonAnswer(reply.text);
  return {
    messages: conversation,
    runId: state.runId,
    pattern: "tools",
    status: "answered",
    answer: reply.text,
    structured: parsed.ok ? parsed.value : undefined,
    attempts: [],
    toolCalls: run.toolCalls,
    usage: run.observer.usage(),
    files: [],
    refusedFiles: [],
    timings: { totalMs: Math.round(performance.now() - state.started) },
  };
}

/** One call the model asked for: its events, its record, and the tool message that answers it. */
async function* runCall(
  settings: ToolsLoopSettings,
  state: LoopState,
  call: RequestedCall & { id: string },
): AsyncGenerator<AgentEvent> {
  const { runId, run } = state;
  const tool = settings.catalog.byModelName.get(call.name);
  const toolName = tool?.name ?? call.name;
  const callEvent = { type: "tool-call" as const, runId, id: call.id, tool: toolName, args: call.args };
  run.tracker.onEvent(callEvent);
  yield callEvent;
  settings.tracer?.call(toolName, call.args);
  const { record, content } =
    call.parseError === undefined
      ? await callTool({
          ...call,
          tool: tool && state.tracked.get(tool.name),
          runId,
          approval: settings.approval,
          availableTools: settings.availableTools,
          signal: run.signal,
        })
      : invalidArguments(call, toolName, call.parseError);
  settings.tracer?.result(toolName, content);
  state.logger?.debug(
    { tool: toolName, status: record.status, durationMs: record.durationMs },
    "tool called",
  );
  run.toolCalls.push(record);
  state.conversation.push(
    new ToolMessage({
      content,
      tool_call_id: call.id,
      name: call.name,
      status: record.status === "ok" ? "success" : "error",
    }),
  );
  const resultEvent = toolResultEvent(runId, record);
  run.tracker.onEvent(resultEvent);
  run.signal.throwIfAborted();
  yield resultEvent;
}

/** The `tool-result` event of a finished call. */
function toolResultEvent(runId: string, record: ToolCallRecord): AgentEvent {
  return {
    type: "tool-result",
    runId,
    id: record.id,
    tool: record.tool,
    durationMs: record.durationMs,
    status: record.status,
    ...(record.status === "ok" ? { result: record.result } : { error: record.error }),
  };
}

type RequestedCall = { id?: string; name: string; args: unknown; parseError?: string };

/** The calls of a reply, including ones whose arguments the provider could not parse. */
function requestedCalls(reply: AIMessage): RequestedCall[] {
  const valid = (reply.tool_calls ?? []).map((call) => ({ id: call.id, name: call.name, args: call.args }));
  const invalid = (reply.invalid_tool_calls ?? []).map((call) => ({
    id: call.id,
    name: call.name ?? "unknown",
    args: call.args,
    parseError: call.error ?? "the arguments are not valid JSON",
  }));
  return [...valid, ...invalid];
}

/** The reply as kept in the conversation: every call (also unparsable ones) with its id. */
function withCallIds(reply: AIMessage, calls: Array<RequestedCall & { id: string }>): AIMessage {
  const hasAllIds = (reply.tool_calls ?? []).every((call) => call.id) && !reply.invalid_tool_calls?.length;
  if (hasAllIds) return reply;
  return new AIMessage({
    content: reply.content,
    id: reply.id,
    response_metadata: reply.response_metadata,
    usage_metadata: reply.usage_metadata,
    tool_calls: calls.map((call) => ({
      id: call.id,
      name: call.name,
      args: isObject(call.args) ? call.args : {},
      type: "tool_call" as const,
    })),
  });
}

function invalidArguments(call: RequestedCall & { id: string }, toolName: string, parseError: string) {
  const error = `Invalid input for tool '${toolName}': ${parseError}. Send the arguments as one JSON object.`;
  return {
    record: {
      id: call.id,
      tool: toolName,
      args: call.args,
      status: "invalid" as const,
      error,
      durationMs: 0,
    },
    content: `Error: ${error}`,
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What the model is told when the agent has a responseFormat. */
function answerShapeInstructions(shape: AnswerShape): string {
  return [
    "When you have the answer, reply with only a JSON value (no prose, no code fence) matching this JSON Schema:",
    shape.schemaText,
  ].join("\n");
}

/** The message that sends an answer of the wrong shape back to the model. */
function answerRepairMessage(problem: string): string {
  return `Your answer was refused: ${problem}. Reply again with only the JSON value, shaped as the JSON Schema says.`;
}
