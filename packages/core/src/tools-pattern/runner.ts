import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import type { Logger } from "pino";
import { MaxIterationsError } from "../errors/max-iterations-error.ts";
import { ToolCallingUnsupportedError } from "../errors/tool-calling-unsupported-error.ts";
import type { ToolSpec } from "../tool-spec.ts";
import type { AgentEvent, AgentResult, ApprovalHook, ToolCallRecord } from "../types.ts";
import { callTool } from "./call-tool.ts";
import { createToolCatalog } from "./tool-definitions.ts";
import { createToolTracer } from "./trace-tools.ts";

export const defaultMaxIterations = 25;

export type ToolsRunnerOptions = {
  model: BaseChatModel;
  tools: ToolSpec[];
  /** Gates every call; a denial reaches the model as "Tool call denied: <reason>". */
  approval?: ApprovalHook;
  /** Print each call and a shortened result (logger info, or stderr without a logger). */
  traceTools?: boolean;
  /** Model turns before the run ends with MaxIterationsError (default 25). */
  maxIterations?: number;
  /** System text put before the conversation for the model (not part of the result's messages). */
  instructions?: string;
  logger?: Logger;
};

export type ToolsRunner = {
  stream(messages: BaseMessage[], runId: string): AsyncGenerator<AgentEvent, AgentResult>;
};

/**
 * The tools pattern: the model calls tools through its native tool calling, results go
 * back as tool messages, until it answers in text or `maxIterations` model turns pass.
 */
export function createToolsRunner(options: ToolsRunnerOptions): ToolsRunner {
  const { model, tools, approval, instructions } = options;
  const maxIterations = options.maxIterations ?? defaultMaxIterations;
  if (!Number.isInteger(maxIterations) || maxIterations < 1) {
    throw new RangeError(`maxIterations must be a whole number of at least 1, got ${maxIterations}.`);
  }
  if (typeof model.bindTools !== "function") {
    throw new ToolCallingUnsupportedError({ modelName: modelName(model) });
  }
  const catalog = createToolCatalog(tools);
  const bound: Runnable<BaseMessage[], AIMessage> =
    catalog.definitions.length > 0 ? model.bindTools(catalog.definitions) : model;
  const availableTools = [...catalog.byModelName.keys()];
  const tracer = options.traceTools ? createToolTracer({ logger: options.logger }) : undefined;

  return {
    async *stream(messages, runId) {
      const started = performance.now();
      const logger = options.logger?.child({ runId, component: "tools-pattern" });
      const conversation = [...messages];
      const toolCalls: ToolCallRecord[] = [];
      let callCount = 0;

      for (let iteration = 1; iteration <= maxIterations; iteration++) {
        const prompt = instructions ? [new SystemMessage(instructions), ...conversation] : conversation;
        const reply = await bound.invoke(prompt);
        const requested = requestedCalls(reply);
        logger?.debug({ iteration, toolCalls: requested.length }, "model replied");

        if (requested.length === 0) {
          conversation.push(reply);
          const result: AgentResult = {
            messages: conversation,
            runId,
            pattern: "tools",
            status: "ok",
            answer: reply.text,
            attempts: [],
            toolCalls,
            timings: { totalMs: performance.now() - started },
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
          yield { type: "tool-call", runId, id: call.id, tool: toolName, args: call.args };
          tracer?.call(toolName, call.args);
          const { record, content } =
            call.parseError === undefined
              ? await callTool({ ...call, tool, runId, approval, availableTools })
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
          yield {
            type: "tool-result",
            runId,
            id: call.id,
            tool: toolName,
            durationMs: record.durationMs,
            status: record.status,
            ...(record.status === "ok" ? { result: record.result } : { error: record.error }),
          };
        }
      }
      // Unreachable: the last iteration either answers or throws.
      throw new Error("tools runner ended without an answer");
    },
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

function modelName(model: BaseChatModel): string {
  try {
    return model._llmType();
  } catch {
    return model.constructor.name;
  }
}
