import { McpServerError } from "../errors/mcp-server-error.ts";

export type ServerToolNames<Key> = { key: Key; serverName: string; toolNames: string[] };

/**
 * The name each MCP tool is offered under. A tool keeps its own name unless that name is also used
 * by a tool of another server or by one of `existingToolNames`; then every MCP tool with that name
 * becomes `<server>_<tool>` (the existing names are never changed). Returns, per server, a map from
 * the tool's own name to the name it is offered under. Throws an McpServerError when a name is still
 * taken after renaming.
 */
export function resolveToolNames<Key>(
  servers: ServerToolNames<Key>[],
  existingToolNames: string[],
): Map<Key, Map<string, string>> {
  const existing = new Set(existingToolNames);
  const uses = new Map<string, number>();
  for (const server of servers) {
    for (const name of new Set(server.toolNames)) uses.set(name, (uses.get(name) ?? 0) + 1);
  }

  const taken = new Map<string, string>(existingToolNames.map((name) => [name, "an existing tool"]));
  const result = new Map<Key, Map<string, string>>();
  for (const server of servers) {
    const names = new Map<string, string>();
    for (const toolName of server.toolNames) {
      const clashes = existing.has(toolName) || (uses.get(toolName) ?? 0) > 1;
      const name = clashes ? `${server.serverName}_${toolName}` : toolName;
      const holder = taken.get(name);
      if (holder !== undefined) {
        throw new McpServerError({
          serverName: server.serverName,
          message:
            `MCP server '${server.serverName}': tool '${toolName}' would be offered as '${name}', ` +
            `but that name is already taken by ${holder}. Rename the server (its key in 'servers') or one of the tools.`,
        });
      }
      taken.set(name, `tool '${toolName}' of MCP server '${server.serverName}'`);
      names.set(toolName, name);
    }
    result.set(server.key, names);
  }
  return result;
}
