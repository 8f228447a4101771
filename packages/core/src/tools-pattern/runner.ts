import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { Logger } from "pino";
import { totalUsage, usageOf } from "../code-action/turn-messages.ts";
import { AbortError } from "../errors/abort-error.ts";
import { CodeActionError } from "../errors/code-action-error.ts";
import { MaxIterationsError } from "../errors/max-iterations-error.ts";
import { ModelCallError } from "../errors/model-call-error.ts";
import { ToolCallingUnsupportedError } from "../errors/tool-calling-unsupported-error.ts";
import { bindToolsThrough, type ChatModelRunnable, modelName } from "../model.ts";
import { type AnswerShape, parseJsonAnswer } from "../structured-answer.ts";
import type { ToolSpec } from "../tool-spec.ts";
import { type ToolCallTracker, trackToolCalls } from "../tracing/tool-runs.ts";
import { linkedController, type TurnRunOptions } from "../tracing/turn-run.ts";
import type { AgentEvent, AgentResult, ApprovalHook, ToolCallRecord } from "../types.ts";
import { callTool } from "./call-tool.ts";
import { createToolCatalog } from "./tool-definitions.ts";
import { createToolTracer } from "./trace-tools.ts";

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

/**
 * The tools pattern: the model calls tools through its native tool calling, results go
 * back as tool messages, until it answers in text or `maxIterations` model turns pass.
 */
export function createToolsRunner(options: ToolsRunnerOptions): ToolsRunner {
  const { model, tools, approval, answerShape } = options;
  const instructions = [options.instructions, answerShape ? answerShapeInstructions(answerShape) : undefined]
    .filter(Boolean)
    .join("\n\n");
  const maxIterations = options.maxIterations ?? defaultMaxIterations;
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new RangeError(`maxIterations must be a whole number of at least 1, got ${maxIterations}.`);
  }
  const catalog = createToolCatalog(tools);
  // Tools, and the answer's shape where the provider takes it natively (checked as text either way).
  const withTools =
    catalog.definitions.length > 0
      ? bindToolsThrough(model, catalog.definitions, answerShape?.schema)
      : answerShape
        ? (bindToolsThrough(model, [], answerShape.schema) ?? model)
        : model;
  if (!withTools) throw new ToolCallingUnsupportedError({ modelName: modelName(model) });
  const bound: ChatModelRunnable = withTools;
  const availableTools = [...catalog.byModelName.keys()];
  const tracer = options.traceTools ? createToolTracer({ logger: options.logger }) : undefined;

  return {
    async *stream(messages, runId, run = {}) {
      const { controller, unlink } = linkedController(run.signal);
      const tracker = trackToolCalls(tools, run.callbacks);
      // The calls made so far, kept here so that an abort can report them.
      const toolCalls: ToolCallRecord[] = [];
      let answered = false;
      try {
        const result = yield* loop(messages, runId, {
          ...run,
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

  async function* loop(
    messages: BaseMessage[],
    runId: string,
    run: TurnRunOptions & { signal: AbortSignal; tracker: ToolCallTracker; toolCalls: ToolCallRecord[] },
  ): AsyncGenerator<AgentEvent, AgentResult> {
    {
      const { signal, tracker, toolCalls } = run;
      const started = performance.now();
      const tracked = new Map(tracker.tools.map((tool) => [tool.name, tool]));
      const logger = options.logger?.child({ runId, component: "tools-pattern" });
      const conversation = [...messages];
      const usages: Array<ReturnType<typeof usageOf>> = [];
      let callCount = 0;

      for (let iteration = 1; iteration <= maxIterations; iteration++) {
        const prompt = instructions ? [new SystemMessage(instructions), ...conversation] : conversation;
        const reply = (await bound
          .invoke(prompt, { signal, ...(run.callbacks ? { callbacks: run.callbacks } : {}) })
          .catch((error: unknown) => {
            if (signal.aborted || CodeActionError.isInstance(error)) throw error;
            throw new ModelCallError({ runId, attempts: [], cause: error });
          })) as AIMessage;
        usages.push(usageOf(reply));
        const requested = requestedCalls(reply);
        logger?.debug({ iteration, toolCalls: requested.length }, "model replied");

        if (requested.length === 0) {
          conversation.push(reply);
          const check = answerShape?.check(reply.text);
          if (check && !check.ok && iteration < maxIterations) {
            // A wrong shape is sent back like a failed tool call: the model answers again.
            logger?.debug({ iteration, problem: check.problem }, "answer refused by responseFormat");
            conversation.push(new HumanMessage(answerRepairMessage(check.problem)));
            continue;
          }
          if (check && !check.ok) {
            throw new MaxIterationsError({
              maxIterations,
              pendingTools: [],
              messages: conversation,
              toolCalls,
            });
          }
          const parsed = check ? check : parseJsonAnswer(reply.text);
          const result: AgentResult = {
            messages: conversation,
            runId,
            pattern: "tools",
            status: "ok",
            answer: reply.text,
            structured: parsed.ok ? parsed.value : undefined,
            attempts: [],
            toolCalls,
            usage: totalUsage(usages),
            files: [],
            refusedFiles: [],
            timings: { totalMs: Math.round(performance.now() - started) },
          };
          yield { type: "answer", runId, result };
          return result;
        }
        if (iteration === maxIterations) {
          // The model's last allowed turn still asks for tools: they are not run, since
          // nobody would read their results.
          throw new MaxIterationsError({
            maxIterations,
            pendingTools: requested.map((call) => call.name),
            messages: [...conversation, reply],
            toolCalls,
          });
        }

        // Every call gets an id, so each tool message answers exactly one call.
        const calls = requested.map((call) => ({ ...call, id: call.id ?? `call_${runId}_${++callCount}` }));
        conversation.push(withCallIds(reply, calls));
        for (const call of calls) {
          const tool = catalog.byModelName.get(call.name);
          const toolName = tool?.name ?? call.name;
          const callEvent = {
            type: "tool-call" as const,
            runId,
            id: call.id,
            tool: toolName,
            args: call.args,
          };
          tracker.onEvent(callEvent);
          yield callEvent;
          tracer?.call(toolName, call.args);
          const { record, content } =
            call.parseError === undefined
              ? await callTool({
                  ...call,
                  tool: tool && tracked.get(tool.name),
                  runId,
                  approval,
                  availableTools,
                  signal,
                })
              : invalidArguments(call, toolName, call.parseError);
          tracer?.result(toolName, content);
          logger?.debug(
            { tool: toolName, status: record.status, durationMs: record.durationMs },
            "tool called",
          );
          toolCalls.push(record);
          conversation.push(
            new ToolMessage({
              content,
              tool_call_id: call.id,
              name: call.name,
              status: record.status === "ok" ? "success" : "error",
            }),
          );
          const resultEvent: AgentEvent = {
            type: "tool-result",
            runId,
            id: call.id,
            tool: toolName,
            durationMs: record.durationMs,
            status: record.status,
            ...(record.status === "ok" ? { result: record.result } : { error: record.error }),
          };
          tracker.onEvent(resultEvent);
          signal.throwIfAborted();
          yield resultEvent;
        }
      }
      // Unreachable: the last iteration either answers or throws.
      throw new Error("tools runner ended without an answer");
    }
  }
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
