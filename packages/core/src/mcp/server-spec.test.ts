import { describe, expect, it } from "vitest";
import { McpServerError } from "../errors/mcp-server-error.ts";
import { checkServerSpecs } from "./server-spec.ts";

function refusal(servers: Record<string, unknown>): McpServerError {
  try {
    checkServerSpecs(servers);
  } catch (error) {
    expect(McpServerError.isInstance(error)).toBe(true);
    return error as McpServerError;
  }
  throw new Error("the specs were accepted");
}

describe("checkServerSpecs", () => {
  it("accepts both kinds with every field, and keeps them as given", () => {
    const servers = {
      files: {
        command: "node",
        args: ["server.js"],
        env: { TOKEN: "x" },
        cwd: "/tmp",
        connectTimeoutMs: 5000,
        callTimeoutMs: 120_000,
      },
      "remote-1": { url: "http://127.0.0.1:3000/mcp", headers: { Authorization: "Bearer t" } },
    };
    expect(checkServerSpecs(servers)).toEqual(servers);
  });

  it("names an unknown key, the key it was probably meant to be, and the valid ones", () => {
    const error = refusal({ files: { command: "node", arg: ["server.js"] } });
    expect(error.serverName).toBe("files");
    expect(error.message).toBe(
      "MCP server 'files': unknown key 'arg' (did you mean 'args'?). A stdio server takes command, args, env, cwd, connectTimeoutMs, callTimeoutMs.",
    );
    expect(refusal({ web: { url: "http://127.0.0.1/mcp", connect_timeout_ms: 5 } }).message).toContain(
      "'connect_timeout_ms' (did you mean 'connectTimeoutMs'?). A Streamable HTTP server takes url, headers, connectTimeoutMs, callTimeoutMs",
    );
    expect(refusal({ web: { url: "http://127.0.0.1/mcp", timeout: 5 } }).message).toContain(
      "'timeout' (did you mean 'connectTimeoutMs' or 'callTimeoutMs'?)",
    );
  });

  it("refuses wrong types and ranges with the field name", () => {
    expect(refusal({ files: { command: "node server.js", args: "--verbose" } }).message).toBe(
      "MCP server 'files': args must be an array of strings.",
    );
    expect(refusal({ files: { command: "" } }).message).toContain("command must not be empty");
    expect(refusal({ files: { command: "node", env: { PORT: 3000 } } }).message).toContain(
      "env must map names to string values (env.PORT)",
    );
    expect(refusal({ files: { command: "node", callTimeoutMs: 0 } }).message).toContain(
      "callTimeoutMs must be at least 1 ms",
    );
    expect(refusal({ files: { command: "node", connectTimeoutMs: 1.5 } }).message).toContain(
      "connectTimeoutMs must be a whole number of milliseconds",
    );
  });

  it("refuses neither or both of command and url, and a spec that is not an object", () => {
    expect(refusal({ empty: {} }).message).toContain("MCP server 'empty' needs either a command (stdio");
    expect(refusal({ both: { command: "node", url: "http://127.0.0.1/mcp" } }).message).toContain(
      "MCP server 'both' has both a command and a url: give one",
    );
    expect(refusal({ line: "node server.js" }).message).toBe(
      `MCP server 'line' must be an object: { command, args } to run a server over stdio, or { url } for Streamable HTTP; got "node server.js".`,
    );
  });

  it("refuses a server name that cannot prefix a tool name, with a usable one", () => {
    const error = refusal({ "my files": { command: "node" } });
    expect(error.message).toContain("MCP server name 'my files' is not usable");
    expect(error.message).toContain("Rename it, like 'my_files'.");
    expect(refusal({ "": { command: "node" } }).message).toContain("MCP server name '' is not usable");
  });
});
