import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { McpServerError } from "../errors/mcp-server-error.ts";
import { McpToolError } from "../errors/mcp-tool-error.ts";
import type { JsonSchema, ToolCallContext, ToolSpec } from "../tools/tool-spec.ts";
import { traceMcpCall } from "../tracing/tool-spans.ts";
import { errorText, mapToolResult } from "./map-tool-result.ts";
import { resolveToolNames } from "./resolve-tool-names.ts";
import { checkServerSpecs, type ServerSpec } from "./server-spec.ts";
import { StdioProcessTransport } from "./stdio-process-transport.ts";

export { parseServerCommand } from "./parse-server-command.ts";
export type { ServerSpec } from "./server-spec.ts";

/** Options of `connectServers`: a logger and the tool names already taken (clashing MCP tools are renamed `<server>_<tool>`). */
export type ConnectServersOptions = {
  logger?: Logger;
  /** Names already taken (extraTools and the like): an MCP tool with one of these becomes `<server>_<tool>`. */
  existingToolNames?: string[];
};

/** The tools of the connected MCP servers, and `close()` to end them. */
export type ConnectedServers = { tools: ToolSpec[]; close(): Promise<void> };

const defaultConnectTimeoutMs = 10_000;
const defaultCallTimeoutMs = 60_000;
const clientInfo = { name: "codeaction", version: "0.1.0" };

type OpenServer = {
  name: string;
  callTimeoutMs: number;
  client: Client;
  transport: Transport;
  tools: Tool[];
  close(): Promise<void>;
};

/**
 * Connects every server (in parallel), lists their tools and returns them as ToolSpecs. A server that
 * fails to start, to initialize or to list its tools within its connect timeout rejects the whole
 * call with an McpServerError naming it and the cause; the servers already open are closed first.
 * `close()` closes every connection and ends every stdio server process (its whole process group).
 */
export async function connectServers(
  servers: Record<string, ServerSpec>,
  options: ConnectServersOptions = {},
): Promise<ConnectedServers> {
  const logger = options.logger?.child({ component: "mcp" });
  // Every name and spec is checked before any server starts.
  const entries = Object.entries(checkServerSpecs(servers));
  const settled = await Promise.allSettled(entries.map(([name, spec]) => openServer(name, spec, logger)));
  const open = settled.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
  const closeAll = async () => {
    await Promise.all(open.map((server) => server.close()));
  };

  const failure = settled.find((outcome) => outcome.status === "rejected");
  if (failure) {
    await closeAll();
    throw failure.reason;
  }

  let names: Map<OpenServer, Map<string, string>>;
  try {
    names = resolveToolNames(
      open.map((server) => ({
        key: server,
        serverName: server.name,
        toolNames: server.tools.map((tool) => tool.name),
      })),
      options.existingToolNames ?? [],
    );
  } catch (error) {
    await closeAll();
    throw error;
  }

  const tools = open.flatMap((server) =>
    server.tools.map((tool) => toToolSpec(server, tool, names.get(server)?.get(tool.name) ?? tool.name)),
  );
  let closing: Promise<void> | undefined;
  return {
    tools,
    close: () => {
      closing ??= closeAll();
      return closing;
    },
  };
}

async function openServer(name: string, spec: ServerSpec, logger: Logger | undefined): Promise<OpenServer> {
  const serverLogger = logger?.child({ server: name });
  const timeoutMs = spec.connectTimeoutMs ?? defaultConnectTimeoutMs;
  const transport = createTransport(name, spec, serverLogger);
  const client = new Client(clientInfo, { capabilities: {} });
  client.onerror = (error) => serverLogger?.debug({ error: error.message }, "mcp transport error");

  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  try {
    await client.connect(transport, { signal: timeout.signal, timeout: timeoutMs });
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, {
        signal: timeout.signal,
        timeout: timeoutMs,
      });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    serverLogger?.debug({ tools: tools.map((tool) => tool.name) }, "mcp server connected");
    return {
      name,
      callTimeoutMs: spec.callTimeoutMs ?? defaultCallTimeoutMs,
      client,
      transport,
      tools,
      close: () => closeClient(client, transport),
    };
  } catch (error) {
    await closeClient(client, transport);
    const timedOut =
      timeout.signal.aborted || (error instanceof McpError && error.code === ErrorCode.RequestTimeout);
    throw startFailure(name, spec, transport, error, { timedOut, timeoutMs });
  } finally {
    clearTimeout(timer);
  }
}

function createTransport(name: string, spec: ServerSpec, logger: Logger | undefined): Transport {
  if ("command" in spec) {
    return new StdioProcessTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      onStderrLine: (line) => logger?.debug({ line }, "mcp server stderr"),
    });
  }
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch (error) {
    throw new McpServerError({
      serverName: name,
      message: `MCP server '${name}': '${spec.url}' is not a valid URL. Give the server's Streamable HTTP endpoint, like http://127.0.0.1:3000/mcp.`,
      cause: error,
    });
  }
  return new StreamableHTTPClientTransport(url, { requestInit: { headers: spec.headers } });
}

async function closeClient(client: Client, transport: Transport): Promise<void> {
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
    // End the server-side session; a server that does not support it answers 405, which is fine.
    await transport.terminateSession().catch(() => {});
  }
  await client.close().catch(() => {});
  // Client.close() closes the transport; closing again waits for a stdio process to be gone.
  await transport.close().catch(() => {});
}

function startFailure(
  name: string,
  spec: ServerSpec,
  transport: Transport,
  error: unknown,
  details: { timedOut: boolean; timeoutMs: number },
): McpServerError {
  if (McpServerError.isInstance(error)) return error;
  const target =
    "command" in spec ? [spec.command, ...(spec.args ?? [])].map(shellQuote).join(" ") : spec.url;
  let reason: string;
  let fix: string;
  let stderrTail = "";
  if (transport instanceof StdioProcessTransport) {
    stderrTail = lastLines(transport.stderrTail, 20);
    const exit = transport.exit;
    if (isSpawnError(error)) {
      reason = `the command could not be started (${error.code}: ${error.message})`;
      fix = "Check that the command exists and is executable, and the cwd.";
    } else if (exit && !details.timedOut) {
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
      reason = `the process ${how} before it listed its tools`;
      fix = "Run the command by hand to see why it stops.";
    } else if (details.timedOut) {
      reason = `it did not answer initialize and tools/list within ${details.timeoutMs} ms`;
      fix =
        "Check that the command starts an MCP server on stdio (and writes nothing but JSON-RPC to stdout), or raise connectTimeoutMs.";
    } else {
      reason = describe(error);
      fix = "Check that the command starts an MCP server speaking JSON-RPC on stdio.";
    }
  } else if (details.timedOut) {
    reason = `it did not answer initialize and tools/list within ${details.timeoutMs} ms`;
    fix =
      "Check that the server is up and the URL is its Streamable HTTP endpoint, or raise connectTimeoutMs.";
  } else {
    reason = describe(error);
    fix =
      "Check that the server is up, the URL is its Streamable HTTP endpoint (often ending in /mcp) and the headers it needs are set.";
  }
  const stderrPart = stderrTail ? `\nIts stderr ended with:\n${stderrTail}` : "";
  return new McpServerError({
    serverName: name,
    message: `MCP server '${name}' (${target}) failed to start: ${reason}. ${fix}${stderrPart}`,
    stderrTail,
    cause: error,
  });
}

function toToolSpec(server: OpenServer, tool: Tool, name: string): ToolSpec {
  const spec: ToolSpec = {
    name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? "",
    inputSchema: withoutMetaSchema(tool.inputSchema),
    origin: `mcp:${server.name}`,
    invoke: (args, context) =>
      traceMcpCall(context, { server: server.name, tool: tool.name }, () =>
        callTool(server, tool.name, args, context),
      ),
  };
  if (tool.outputSchema) spec.outputSchema = withoutMetaSchema(tool.outputSchema);
  return spec;
}

/** The schema without its `$schema` dialect marker, which model APIs do not expect in tool parameters. */
function withoutMetaSchema(schema: Record<string, unknown>): JsonSchema {
  const { $schema: _dialect, ...rest } = schema;
  return rest as JsonSchema;
}

async function callTool(
  server: OpenServer,
  toolName: string,
  args: Record<string, unknown>,
  context: ToolCallContext,
): Promise<unknown> {
  let result: CallToolResult;
  try {
    result = (await server.client.callTool({ name: toolName, arguments: args }, undefined, {
      signal: context.signal,
      // callTimeoutMs (default 60 s), restarted by each progress notification the tool sends.
      timeout: server.callTimeoutMs,
      onprogress: () => {},
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
  } catch (error) {
    throw new McpToolError({
      serverName: server.name,
      toolName,
      isErrorResult: false,
      message:
        error instanceof McpError && error.code === ErrorCode.RequestTimeout
          ? `MCP server '${server.name}' did not answer tool '${toolName}' within ${server.callTimeoutMs} ms; raise callTimeoutMs in the server's spec if the tool needs longer${exitNote(server.transport)}`
          : `MCP server '${server.name}' could not run tool '${toolName}': ${describe(error)}${exitNote(server.transport)}`,
      cause: error,
    });
  }
  if (result.isError) {
    throw new McpToolError({
      serverName: server.name,
      toolName,
      isErrorResult: true,
      message:
        errorText(result) ||
        `tool '${toolName}' on MCP server '${server.name}' reported an error without a message`,
    });
  }
  return mapToolResult(result);
}

function exitNote(transport: Transport): string {
  if (!(transport instanceof StdioProcessTransport) || !transport.exit) return "";
  const exit = transport.exit;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
  const tail = lastLines(transport.stderrTail, 5);
  return ` (the server process ${how}${tail ? `; its stderr ended with: ${tail}` : ""})`;
}

/** An error from starting the process (ENOENT, EACCES), not one from talking to it (EPIPE). */
function isSpawnError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  const syscall = error instanceof Error ? (error as NodeJS.ErrnoException).syscall : undefined;
  return typeof syscall === "string" && syscall.startsWith("spawn");
}

/** An error's message, followed by its causes' messages (fetch puts ECONNREFUSED in `cause`). */
function describe(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current !== undefined && current !== null && parts.length < 4) {
    let text = current instanceof Error ? current.message : String(current);
    if (current instanceof StreamableHTTPError && current.code !== undefined && current.code > 0) {
      text = `HTTP ${current.code}: ${text}`;
    }
    if (text && !parts.includes(text)) parts.push(text);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ") || "unknown error";
}

/** A word as a shell would need it quoted, for messages a user can copy and run. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split("\n").slice(-count).join("\n");
}
