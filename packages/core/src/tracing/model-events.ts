import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { modelName } from "../model/model.ts";
import type { AgentEvent } from "../types.ts";
import type { StepInfo } from "./run-observer.ts";

type ModelStart = Extract<AgentEvent, { type: "model-start" }>;
type ModelEnd = Extract<AgentEvent, { type: "model-end" }>;

/**
 * The `model-start` and `model-end` events of one model call, so a stream shows something while the
 * model thinks. They carry no content: the model's name, where the call belongs, its time and tokens.
 */
export class ModelCallEvents {
  readonly #started = performance.now();
  readonly #base: Omit<ModelStart, "type">;

  constructor(runId: string, model: unknown, step: StepInfo) {
    this.#base = {
      runId,
      model: modelName(model),
      ...(step.attempt !== undefined ? { attempt: step.attempt } : {}),
      ...(step.sample ? { sample: step.sample } : {}),
    };
  }

  start(): ModelStart {
    return { type: "model-start", ...this.#base };
  }

  /** The call's end: with the reply's token counts, or `ok: false` when it failed or was stopped. */
  end(reply: BaseMessage | undefined): ModelEnd {
    const usage = (reply as AIMessage | undefined)?.usage_metadata;
    return {
      type: "model-end",
      ...this.#base,
      ok: reply !== undefined,
      durationMs: Math.round(performance.now() - this.#started),
      ...(usage ? { inputTokens: usage.input_tokens, outputTokens: usage.output_tokens } : {}),
    };
  }
}
