import { ConfigError } from "../errors/config-error.ts";
import type { ServerSpec } from "./server-spec.ts";

/**
 * Turns a command line (the CLI's `--server "CMD"`) into a ServerSpec, splitting it the way a POSIX
 * shell would without running one: whitespace separates words, '...' is literal, "..." keeps spaces
 * and honours \" \\ \$ \`, a backslash outside quotes escapes the next character. Leading
 * `NAME=value` words become `env`. A single http:// or https:// word becomes a Streamable HTTP spec.
 * No expansion of variables, globs or `~`.
 */
export function parseServerCommand(commandLine: string): ServerSpec {
  const words = splitCommandLine(commandLine);
  const only = words[0];
  if (words.length === 1 && only !== undefined && /^https?:\/\//i.test(only)) return { url: only };

  const env: Record<string, string> = {};
  let index = 0;
  for (; index < words.length; index++) {
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(words[index] ?? "");
    if (!assignment) break;
    env[assignment[1] as string] = assignment[2] as string;
  }
  const [command, ...args] = words.slice(index);
  if (command === undefined) {
    throw new ConfigError({
      message: `The MCP server command line '${commandLine}' has no command. Give the command that starts the server, like "npx -y @modelcontextprotocol/server-everything" or "node server.js".`,
    });
  }
  const spec: ServerSpec = { command, args };
  if (Object.keys(env).length > 0) spec.env = env;
  return spec;
}

function splitCommandLine(commandLine: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let index = 0; index < commandLine.length; index++) {
    const character = commandLine[index] as string;
    if (quote === "'") {
      if (character === "'") quote = undefined;
      else word += character;
    } else if (quote === '"') {
      const next = commandLine[index + 1];
      if (character === '"') quote = undefined;
      else if (character === "\\" && next !== undefined && '"\\$`'.includes(next)) {
        word += next;
        index++;
      } else word += character;
    } else if (character === "'" || character === '"') {
      quote = character;
      inWord = true;
    } else if (character === "\\") {
      const next = commandLine[index + 1];
      if (next === undefined) {
        throw unbalanced(commandLine, "it ends with a lone backslash");
      }
      if (next !== "\n") word += next;
      inWord = true;
      index++;
    } else if (/\s/.test(character)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += character;
      inWord = true;
    }
  }
  if (quote) throw unbalanced(commandLine, `a ${quote} quote is not closed`);
  if (inWord) words.push(word);
  return words;
}

function unbalanced(commandLine: string, reason: string): ConfigError {
  return new ConfigError({
    message: `Cannot split the MCP server command line '${commandLine}': ${reason}. Quote it as you would in a shell.`,
  });
}
