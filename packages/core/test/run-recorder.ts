import { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/** One run as a LangChain callback handler saw it. */
export type RecordedRun = {
  kind: "chain" | "llm" | "tool";
  id: string;
  parentId?: string;
  name?: string;
  tags: string[];
  metadata: Record<string, unknown>;
  input?: unknown;
  output?: unknown;
  error?: string;
  ended: boolean;
};

/** A real callback handler that records the run tree it is told about. */
export class RunRecorder extends BaseCallbackHandler {
  name = "run-recorder";
  readonly runs = new Map<string, RecordedRun>();

  constructor() {
    // Recorded before invoke returns, not in the background.
    super({ _awaitHandler: true });
  }

  #start(kind: RecordedRun["kind"], fields: Omit<RecordedRun, "kind" | "ended">): void {
    this.runs.set(fields.id, { kind, ended: false, ...fields });
  }

  #end(id: string, update: Partial<RecordedRun>): void {
    const run = this.runs.get(id);
    if (run) Object.assign(run, update, { ended: true });
  }

  override handleChainStart(
    _chain: unknown,
    inputs: unknown,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): void {
    this.#start("chain", {
      id: runId,
      parentId: parentRunId,
      name: runName,
      tags: tags ?? [],
      metadata: metadata ?? {},
      input: inputs,
    });
  }

  override handleChainEnd(outputs: unknown, runId: string): void {
    this.#end(runId, { output: outputs });
  }

  override handleChainError(error: unknown, runId: string): void {
    this.#end(runId, { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }

  override handleChatModelStart(
    _llm: unknown,
    messages: unknown,
    runId: string,
    parentRunId?: string,
    _extra?: unknown,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#start("llm", {
      id: runId,
      parentId: parentRunId,
      name: runName,
      tags: tags ?? [],
      metadata: metadata ?? {},
      input: messages,
    });
  }

  override handleLLMEnd(output: unknown, runId: string): void {
    this.#end(runId, { output });
  }

  override handleLLMError(error: unknown, runId: string): void {
    this.#end(runId, { error: error instanceof Error ? error.message : String(error) });
  }

  override handleToolStart(
    _tool: unknown,
    input: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): void {
    this.#start("tool", {
      id: runId,
      parentId: parentRunId,
      name: runName,
      tags: tags ?? [],
      metadata: metadata ?? {},
      input,
    });
  }

  override handleToolEnd(output: unknown, runId: string): void {
    this.#end(runId, { output });
  }

  override handleToolError(error: unknown, runId: string): void {
    this.#end(runId, { error: error instanceof Error ? error.message : String(error) });
  }

  /** The runs whose parent is `parent` (the roots for undefined), in start order. */
  children(parent: RecordedRun | undefined): RecordedRun[] {
    return [...this.runs.values()].filter((run) => run.parentId === parent?.id);
  }

  /** The one root run. */
  root(): RecordedRun {
    const roots = this.children(undefined);
    if (roots.length !== 1) throw new Error(`expected one root run, got ${roots.length}`);
    return roots[0] as RecordedRun;
  }
}
