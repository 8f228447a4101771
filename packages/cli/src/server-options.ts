import type { ServerSpec } from "@codeaction/core";
import { UsageError } from "./errors/usage-error.ts";

/**
 * `--server "CMD"` values as named MCP servers. Each command line is split like a shell would
 * (without running one); the name comes from the command's last word ("node fixtures/files.js" ->
 * "files"), made unique, and is what tool-name collisions are resolved with. A command runs in
 * `cwd`, the command's folder (CliContext.cwd), so its relative paths are that folder's.
 */
export async function serverSpecs(
  commandLines: string[],
  command: string,
  cwd: string,
): Promise<Record<string, ServerSpec>> {
  const servers: Record<string, ServerSpec> = {};
  if (commandLines.length === 0) return servers;
  const { ConfigError, parseServerCommand } = await import("@codeaction/core");
  for (const commandLine of commandLines) {
    let spec: ServerSpec;
    try {
      spec = parseServerCommand(commandLine);
    } catch (error) {
      if (ConfigError.isInstance(error))
        throw new UsageError({ command, message: `--server: ${error.message}`, cause: error });
      throw error;
    }
    let name = serverName(spec);
    for (let index = 2; Object.hasOwn(servers, name); index += 1) name = `${serverName(spec)}_${index}`;
    servers[name] = "command" in spec ? { cwd, ...spec } : spec;
  }
  return servers;
}

/** Each --server command line under the name its server got (for the run record). */
export function serverCommandLines(
  commandLines: string[],
  servers: Record<string, ServerSpec>,
): Record<string, string> {
  const names = Object.keys(servers);
  return Object.fromEntries(
    commandLines.map((commandLine, index) => [names[index] ?? `server_${index + 1}`, commandLine]),
  );
}

export function serverName(spec: ServerSpec): string {
  let word: string;
  if ("url" in spec) {
    try {
      word = new URL(spec.url).hostname;
    } catch {
      word = "server";
    }
  } else {
    const words = [spec.command, ...(spec.args ?? [])].filter((item) => !item.startsWith("-"));
    word = words.at(-1) ?? spec.command;
  }
  const base = word.split(/[\\/]/).pop() ?? word;
  const name = base
    .replace(/\.(m?js|ts|py|cjs|mts)$/i, "")
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 56);
  return name === "" || /^[0-9]/.test(name) ? `server_${name}` : name;
}
