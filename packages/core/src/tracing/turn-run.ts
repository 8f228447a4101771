import type { CallbackManager, CallbackManagerForChainRun } from "@langchain/core/callbacks/manager";
import type { RunObserver } from "./run-observer.ts";

/** What the agent hands a turn from the caller's RunnableConfig. */
export type TurnRunOptions = {
  /** Cancels the turn at any stage. */
  signal?: AbortSignal;
  /** The turn's chain run's child manager: model calls, attempts and tool calls report under it. */
  callbacks?: CallbackManager;
  /** The run's usage, budget and spans (the agent makes one per run; a turn run alone makes its own). */
  observer?: RunObserver;
  /** `configurable.thread_id`: the thread whose interpreter a code-action run with state "thread" uses. */
  threadId?: string;
};

/** Starts a child chain run (an attempt) named `name`; undefined without callbacks. */
export function startChildRun(
  callbacks: CallbackManager | undefined,
  options: {
    name: string;
    inputs: Record<string, unknown>;
    tags?: string[];
    metadata?: Record<string, unknown>;
  },
): Promise<CallbackManagerForChainRun | undefined> {
  if (!callbacks) return Promise.resolve(undefined);
  // Tags and metadata of this run only (the manager ignores handleChainStart's own tag arguments).
  const manager = callbacks.copy();
  if (options.tags?.length) manager.addTags(options.tags, false);
  if (options.metadata) manager.addMetadata(options.metadata, false);
  return manager.handleChainStart(
    { lc: 1, type: "not_implemented", id: ["codeaction", options.name] },
    options.inputs,
    undefined,
    undefined,
    options.tags,
    options.metadata,
    options.name,
  );
}

/** Links `outer` to a new controller: aborting either aborts the controller. */
export function linkedController(outer: AbortSignal | undefined): {
  controller: AbortController;
  unlink: () => void;
} {
  const controller = new AbortController();
  if (!outer) return { controller, unlink: () => undefined };
  const forward = () => controller.abort(outer.reason);
  if (outer.aborted) forward();
  else outer.addEventListener("abort", forward, { once: true });
  return { controller, unlink: () => outer.removeEventListener("abort", forward) };
}
