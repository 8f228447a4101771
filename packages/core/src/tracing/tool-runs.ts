import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { AgentEvent } from "../types.ts";
import type { RunObserver } from "./run-observer.ts";
import { type ToolTraceParent, traceRefusedCall, traceToolCall } from "./tool-spans.ts";

/** What a turn keeps about the tool calls it started: the ones still running, to wait for on abort. */
export type ToolCallTracker = {
  /** The tools, each call reported as a LangChain tool run under `parent` and counted while it runs. */
  tools: ToolSpec[];
  /** Feed every tool event: a call refused before reaching its tool (denied, unknown, over the limit) becomes a failed run. */
  onEvent(event: AgentEvent): void;
  /** Resolves when every call started so far has settled. */
  settled(): Promise<void>;
};

const serialized = (name: string) => ({
  lc: 1,
  type: "not_implemented" as const,
  id: ["codeaction", "tool", name],
});

/**
 * Wraps the tools of one attempt (or one tools-pattern turn). Each call is a child tool run of
 * `parent` with its name, arguments, and result or error; a LangChain tool reports its own run, so
 * it only receives `parent`. Calls the bridge refused are reported as failed runs from the events.
 */
export function trackToolCalls(
  tools: ToolSpec[],
  parent: CallbackManager | undefined,
  observed?: ToolTraceParent & { observer?: RunObserver },
): ToolCallTracker {
  const running = new Set<Promise<unknown>>();
  const invoked = new Set<string>();
  const requested = new Map<string, unknown>();

  const wrap = (tool: ToolSpec): ToolSpec => ({
    ...tool,
    invoke(args, context) {
      if (context.callId !== undefined) invoked.add(context.callId);
      const call = traceToolCall(
        observed,
        tool,
        { args, ...(context.callId ? { callId: context.callId } : {}) },
        (trace) =>
          invokeTraced(tool, args, {
            ...context,
            ...(parent ? { callbacks: parent } : {}),
            ...(trace ? { trace } : {}),
          }),
      );
      const settledCall = call.catch(() => undefined);
      running.add(settledCall);
      void settledCall.finally(() => running.delete(settledCall));
      return call;
    },
  });

  return {
    tools: tools.map(wrap),
    onEvent(event) {
      if (event.type === "tool-call") {
        requested.set(event.id, event.args);
        return;
      }
      if (event.type !== "tool-result") return;
      observed?.observer?.toolEvent(event);
      const args = requested.get(event.id);
      requested.delete(event.id);
      if (invoked.delete(event.id)) return;
      traceRefusedCall(observed, event);
      if (!parent) return;
      const refused = reportRefused(parent, { ...event, args });
      running.add(refused);
      void refused.finally(() => running.delete(refused));
    },
    async settled() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

async function invokeTraced(
  tool: ToolSpec,
  args: Record<string, unknown>,
  context: Parameters<ToolSpec["invoke"]>[1],
): Promise<unknown> {
  const parent = context.callbacks;
  if (!parent || tool.tracesItself) return tool.invoke(args, context);
  const run = await parent.handleToolStart(
    serialized(tool.name),
    JSON.stringify(args),
    undefined,
    undefined,
    undefined,
    { origin: tool.origin },
    tool.name,
    context.callId,
  );
  try {
    const result = await tool.invoke(args, { ...context, callbacks: run.getChild() });
    await run.handleToolEnd(result);
    return result;
  } catch (error) {
    await run.handleToolError(error);
    throw error;
  }
}

async function reportRefused(
  parent: CallbackManager,
  event: { id: string; tool: string; args: unknown; status: string; error?: string },
): Promise<void> {
  const run = await parent.handleToolStart(
    serialized(event.tool),
    JSON.stringify(event.args ?? {}),
    undefined,
    undefined,
    undefined,
    { status: event.status },
    event.tool,
    event.id,
  );
  await run.handleToolError(new Error(event.error ?? `the call was not made (${event.status})`));
}
