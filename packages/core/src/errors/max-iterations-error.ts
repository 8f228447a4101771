import type { BaseMessage } from "@langchain/core/messages";
import type { ToolCallRecord } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "max-iterations";
const marker = "codeaction.core.max-iterations-error";
const symbol = Symbol.for(marker);

/** The tools pattern: the model was still calling tools when `maxIterations` model turns had passed. */
export class MaxIterationsError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly maxIterations: number;
  /** The conversation so far, ending with the reply whose calls were not run. */
  readonly messages: BaseMessage[];
  readonly toolCalls: ToolCallRecord[];

  constructor(options: {
    maxIterations: number;
    pendingTools: string[];
    messages: BaseMessage[];
    toolCalls: ToolCallRecord[];
  }) {
    super(
      `The model was still calling tools (${options.pendingTools.join(", ")}) after ${options.maxIterations} ` +
        `model turns (maxIterations), so there is no answer; those last calls were not run. ` +
        `Raise maxIterations, or look at error.toolCalls for a loop (${options.toolCalls.length} calls made).`,
      { code },
    );
    this.name = "MaxIterationsError";
    this.maxIterations = options.maxIterations;
    this.messages = options.messages;
    this.toolCalls = options.toolCalls;
  }

  static override isInstance(error: unknown): error is MaxIterationsError {
    return CodeActionError.hasMarker(error, marker);
  }
}
