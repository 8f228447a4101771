import { CodeActionError } from "./code-action-error.ts";

const code = "tool-calling-unsupported";
const marker = "codeaction.core.tool-calling-unsupported-error";
const symbol = Symbol.for(marker);

/** The tools pattern needs a chat model with native tool calling (`bindTools`). */
export class ToolCallingUnsupportedError extends CodeActionError {
  protected readonly [symbol] = true;
  constructor(options: { modelName: string }) {
    super(
      `The model '${options.modelName}' has no native tool calling (no bindTools method), which the ` +
        `tools pattern and shell mode need. Use a chat model that supports tool calling ` +
        `(ChatOpenAI and most chat models do), or pattern: "code-action", which needs none.`,
      { code },
    );
    this.name = "ToolCallingUnsupportedError";
  }

  static override isInstance(error: unknown): error is ToolCallingUnsupportedError {
    return CodeActionError.hasMarker(error, marker);
  }
}
