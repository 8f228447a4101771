import { CodeActionError } from "./code-action-error.ts";

const code = "tool-input-invalid";
const marker = "codeaction.core.tool-input-error";
const symbol = Symbol.for(marker);

/**
 * A tool was called with arguments its schema refuses. The tool loop hands the message back to the
 * model (status "invalid") so it can correct the call.
 */
export class ToolInputError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly tool: string;

  constructor(options: { tool: string; issues: string; cause?: unknown }) {
    super(
      `Invalid input for tool '${options.tool}': ${options.issues}${/[.?!]$/.test(options.issues) ? "" : "."} Call it again with arguments that match its schema.`,
      { code, cause: options.cause },
    );
    this.name = "ToolInputError";
    this.tool = options.tool;
  }

  static override isInstance(error: unknown): error is ToolInputError {
    return CodeActionError.hasMarker(error, marker);
  }
}
