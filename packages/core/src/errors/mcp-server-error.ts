import { CodeActionError } from "./code-action-error.ts";

const code = "mcp-server";
const marker = "codeaction.core.mcp-server-error";
const symbol = Symbol.for(marker);

/**
 * An MCP server could not be used: it failed to start, to answer `initialize` or to list its tools
 * within the connect timeout, or its tool names could not be made unique. The message names the
 * server and the cause; for a stdio server it ends with the tail of the server's stderr.
 */
export class McpServerError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly serverName: string;
  /** The last lines a stdio server wrote to stderr ("" for HTTP servers or a silent process). */
  readonly stderrTail: string;

  constructor(options: { serverName: string; message: string; stderrTail?: string; cause?: unknown }) {
    super(options.message, { code, cause: options.cause });
    this.name = "McpServerError";
    this.serverName = options.serverName;
    this.stderrTail = options.stderrTail ?? "";
  }

  static override isInstance(error: unknown): error is McpServerError {
    return CodeActionError.hasMarker(error, marker);
  }
}
