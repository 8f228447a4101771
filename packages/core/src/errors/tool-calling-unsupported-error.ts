import { CodeActionError, hasCode } from "./code-action-error.ts";

const code = "tool-calling-unsupported";

/** The tools pattern needs a chat model with native tool calling (`bindTools`). */
export class ToolCallingUnsupportedError extends CodeActionError {
  constructor(options: { modelName: string }) {
    super({
      code,
      message:
        `The model '${options.modelName}' has no native tool calling (no bindTools method), which the ` +
        `tools pattern and shell mode need. Use a chat model that supports tool calling ` +
        `(ChatOpenAI and most chat models do), or pattern: "code-action", which needs none.`,
    });
    this.name = "ToolCallingUnsupportedError";
  }

  static override isInstance(error: unknown): error is ToolCallingUnsupportedError {
    return hasCode(error, code);
  }
}
