import { z } from "zod";
import { McpServerError } from "../errors/mcp-server-error.ts";

const timeoutMs = (what: string) =>
  z
    .number({ error: `${what} must be a number of milliseconds` })
    .int(`${what} must be a whole number of milliseconds`)
    .min(1, `${what} must be at least 1 ms`)
    .max(3_600_000, `${what} must be at most 3600000 ms (one hour)`)
    .optional();

const shared = {
  /** Start, `initialize` and `tools/list` together (default 10 s). */
  connectTimeoutMs: timeoutMs("connectTimeoutMs"),
  /** One tool call, restarted by each progress notification (default 60 s). */
  callTimeoutMs: timeoutMs("callTimeoutMs"),
};

const stdioSchema = z.strictObject({
  command: z.string({ error: "command must be a string" }).min(1, "command must not be empty"),
  args: z.array(z.string(), { error: "args must be an array of strings" }).optional(),
  env: z
    .record(z.string(), z.string({ error: "env must map names to string values" }), {
      error: "env must map names to string values",
    })
    .optional(),
  cwd: z.string({ error: "cwd must be a string" }).optional(),
  ...shared,
});

const httpSchema = z.strictObject({
  url: z.string({ error: "url must be a string" }),
  headers: z.record(z.string(), z.string(), { error: "headers must map names to string values" }).optional(),
  ...shared,
});

/** How to reach one MCP server: a command to run over stdio, or a Streamable HTTP endpoint. */
export type ServerSpec = z.infer<typeof stdioSchema> | z.infer<typeof httpSchema>;

const serverName = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks every server's name and spec before anything starts: an unknown key (with the key it was
 * probably meant to be), a wrong type or range, both or neither of command and url. Throws an
 * McpServerError naming the server, the field and the fix.
 */
export function checkServerSpecs(servers: Record<string, unknown>): Record<string, ServerSpec> {
  const checked: Record<string, ServerSpec> = {};
  for (const [name, spec] of Object.entries(servers)) {
    if (!serverName.test(name)) {
      const suggestion = name.replace(/[^A-Za-z0-9_-]+/g, "_").slice(0, 64) || "files";
      throw new McpServerError({
        serverName: name,
        message: `MCP server name '${name}' is not usable: a name holds 1 to 64 letters, digits, '_' or '-', because it prefixes tool names on a clash (${name}_<tool>) and model APIs refuse other characters there. Rename it, like '${suggestion}'.`,
      });
    }
    checked[name] = checkServerSpec(name, spec);
  }
  return checked;
}

function checkServerSpec(name: string, spec: unknown): ServerSpec {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) {
    throw new McpServerError({
      serverName: name,
      message: `MCP server '${name}' must be an object: { command, args } to run a server over stdio, or { url } for Streamable HTTP; got ${describeValue(spec)}.`,
    });
  }
  const hasCommand = "command" in spec;
  const hasUrl = "url" in spec;
  if (hasCommand === hasUrl) {
    throw new McpServerError({
      serverName: name,
      message: hasCommand
        ? `MCP server '${name}' has both a command and a url: give one, the command for a stdio server or the url for a Streamable HTTP server.`
        : `MCP server '${name}' needs either a command (stdio, like { command: "node", args: ["server.js"] }) or a url (Streamable HTTP, like { url: "http://127.0.0.1:3000/mcp" }).`,
    });
  }
  const schema = hasCommand ? stdioSchema : httpSchema;
  const parsed = schema.safeParse(spec);
  if (parsed.success) return parsed.data;
  const valid = Object.keys(schema.shape);
  const kind = hasCommand ? "A stdio server" : "A Streamable HTTP server";
  const problems = parsed.error.issues.map((issue) => {
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((key) => `'${key}'${hint(key, valid)}`).join(", ");
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}. ${kind} takes ${valid.join(", ")}`;
    }
    // A value deeper than the field itself (env.PORT, args.1) is named too.
    return issue.path.length > 1 ? `${issue.message} (${issue.path.join(".")})` : issue.message;
  });
  throw new McpServerError({ serverName: name, message: `MCP server '${name}': ${problems.join("; ")}.` });
}

/** "arg" -> " (did you mean 'args'?)"; "connect_timeout_ms" -> " (did you mean 'connectTimeoutMs'?)". */
function hint(key: string, valid: string[]): string {
  const folded = key.replace(/[_-]/g, "").toLowerCase();
  const match = valid.find((name) => {
    const candidate = name.toLowerCase();
    return candidate === folded || candidate === `${folded}s` || `${candidate}s` === folded;
  });
  if (match) return ` (did you mean '${match}'?)`;
  if (folded === "timeout") return " (did you mean 'connectTimeoutMs' or 'callTimeoutMs'?)";
  if (folded === "endpoint" || folded === "uri") return " (did you mean 'url'?)";
  return "";
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
}
