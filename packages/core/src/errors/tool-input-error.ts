import { CodeActionError, hasCode } from "./code-action-error.ts";

const code = "tool-input-invalid";

/**
 * A tool was called with arguments its schema refuses. The tool loop hands the message back to the
 * model (status "invalid") so it can correct the call.
 */
export class ToolInputError extends CodeActionError {
  readonly tool: string;

  constructor(options: { tool: string; issues: string; cause?: unknown }) {
    super({
      code,
      message: `Invalid input for tool '${options.tool}': ${options.issues}${/[.?!]$/.test(options.issues) ? "" : "."} Call it again with arguments that match its schema.`,
      cause: options.cause,
    });
    this.name = "ToolInputError";
    this.tool = options.tool;
  }

  static override isInstance(error: unknown): error is ToolInputError {
    return hasCode(error, code);
  }
}
