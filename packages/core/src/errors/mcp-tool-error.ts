import { CodeActionError } from "./code-action-error.ts";

const code = "mcp-tool";
const marker = "codeaction.core.mcp-tool-error";
const symbol = Symbol.for(marker);

/**
 * An MCP tool call failed: the server answered with an error result (`isError`), in which case the
 * message is exactly the server's text, or the call itself failed (connection lost, timeout,
 * protocol error). The bridge turns it into `ToolError(message)` in the program.
 */
export class McpToolError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly serverName: string;
  readonly toolName: string;
  /** True when the server answered with `isError` (the tool ran and reported a failure). */
  readonly isErrorResult: boolean;

  constructor(options: {
    serverName: string;
    toolName: string;
    message: string;
    isErrorResult: boolean;
    cause?: unknown;
  }) {
    super(options.message, { code, cause: options.cause });
    this.name = "McpToolError";
    this.serverName = options.serverName;
    this.toolName = options.toolName;
    this.isErrorResult = options.isErrorResult;
  }

  static override isInstance(error: unknown): error is McpToolError {
    return CodeActionError.hasMarker(error, marker);
  }
}
