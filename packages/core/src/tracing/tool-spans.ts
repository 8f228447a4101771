import type { ToolCallContext, ToolSpec } from "../tools/tool-spec.ts";
import type { OpenSpan, RunSpans } from "./run-spans.ts";

/** A tool call's span, handed to the tool so its own calls (an MCP request) are its children. */
export type ToolTrace = {
  child<T>(
    name: string,
    attributes: Record<string, string | number | boolean>,
    work: () => Promise<T>,
  ): Promise<T>;
};

/** Where a run's tool calls are traced: the run's spans and the span of the program calling (absent: the agent's). */
export type ToolTraceParent = { spans: RunSpans | undefined; parent?: OpenSpan };

/**
 * One tool call as an execute_tool span under its program (or the agent, in the tools pattern),
 * active while the tool runs; arguments and result only when content is recorded.
 */
export async function traceToolCall(
  where: ToolTraceParent | undefined,
  tool: ToolSpec,
  call: { args: Record<string, unknown>; callId?: string },
  invoke: (trace: ToolTrace | undefined) => Promise<unknown>,
): Promise<unknown> {
  const spans = where?.spans;
  if (!spans) return invoke(undefined);
  const started = performance.now();
  const span = spans.start(`execute_tool ${tool.name}`, (where.parent ?? spans.agent).context, {
    ...toolAttributes(tool, call.callId),
    "gen_ai.tool.call.arguments": spans.content(() => JSON.stringify(call.args)),
  });
  const trace: ToolTrace = {
    child: (name, attributes, work) => {
      const child = spans.start(
        name,
        span.context,
        { "gen_ai.operation.name": "execute_tool", ...attributes },
        "client",
      );
      return settle(child, spans.within(child, work));
    },
  };
  try {
    const result = await spans.within(span, () => invoke(trace));
    span.set({
      "codeaction.tool.status": "ok",
      "codeaction.tool.duration_ms": Math.round(performance.now() - started),
      "gen_ai.tool.call.result": spans.content(() => JSON.stringify(result) ?? String(result)),
    });
    span.end();
    return result;
  } catch (error) {
    span.set({
      "codeaction.tool.status": "error",
      "codeaction.tool.duration_ms": Math.round(performance.now() - started),
    });
    span.end(error);
    throw error;
  }
}

/** A call refused before it reached its tool (denied, unknown, over the limit, invalid): a failed span. */
export function traceRefusedCall(
  where: ToolTraceParent | undefined,
  event: { id: string; tool: string; status: string; error?: string; durationMs: number },
): void {
  const spans = where?.spans;
  if (!spans) return;
  const span = spans.start(`execute_tool ${event.tool}`, (where.parent ?? spans.agent).context, {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": event.tool,
    "gen_ai.tool.call.id": event.id,
    "codeaction.tool.status": event.status,
    "codeaction.tool.duration_ms": Math.round(event.durationMs),
  });
  // Its type is the status (denied, unknown, ...); the message, which can name arguments, is content.
  const refusal = Object.assign(new Error(event.error ?? `the call was not made (${event.status})`), {
    code: event.status,
  });
  span.end(refusal);
}

/** An MCP request made for a tool call, as a child of that call's span (when it is traced). */
export function traceMcpCall<T>(
  context: ToolCallContext,
  call: { server: string; tool: string },
  work: () => Promise<T>,
): Promise<T> {
  if (!context.trace) return work();
  return context.trace.child(
    `tools/call ${call.tool}`,
    { "mcp.method.name": "tools/call", "gen_ai.tool.name": call.tool, "codeaction.mcp.server": call.server },
    work,
  );
}

function toolAttributes(tool: ToolSpec, callId: string | undefined) {
  return {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool.name,
    "gen_ai.tool.call.id": callId,
    "gen_ai.tool.type": "function",
    "codeaction.tool.origin": tool.origin,
  };
}

async function settle<T>(span: OpenSpan, work: Promise<T>): Promise<T> {
  try {
    const value = await work;
    span.end();
    return value;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
