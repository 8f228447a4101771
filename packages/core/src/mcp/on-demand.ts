import type { ConnectedServers, ConnectServersOptions, ServerSpec } from "./connect.ts";

/**
 * Connects every server (in parallel), lists their tools and returns them as ToolSpecs. A server that
 * fails to start, to initialize or to list its tools within its connect timeout rejects the whole
 * call with an McpServerError naming it and the cause; the servers already open are closed first.
 * `close()` closes every connection and ends every stdio server process (its whole process group).
 * The MCP SDK is loaded at the first call, so an agent without servers never loads it.
 */
export async function connectServers(
  servers: Record<string, ServerSpec>,
  options: ConnectServersOptions = {},
): Promise<ConnectedServers> {
  const connect = await import("./connect.ts");
  return connect.connectServers(servers, options);
}
