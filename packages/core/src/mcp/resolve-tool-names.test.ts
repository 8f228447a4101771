import { describe, expect, it } from "vitest";
import { McpServerError } from "../errors/mcp-server-error.ts";
import { resolveToolNames } from "./resolve-tool-names.ts";

function resolve(servers: Record<string, string[]>, existing: string[] = []) {
  const result = resolveToolNames(
    Object.entries(servers).map(([serverName, toolNames]) => ({ key: serverName, serverName, toolNames })),
    existing,
  );
  return Object.fromEntries([...result].map(([key, names]) => [key, Object.fromEntries(names)]));
}

describe("resolveToolNames", () => {
  it("keeps names that are unique", () => {
    expect(resolve({ a: ["search", "get-user"], b: ["fetch"] }, ["load_orders"])).toEqual({
      a: { search: "search", "get-user": "get-user" },
      b: { fetch: "fetch" },
    });
  });

  it("prefixes every MCP tool that shares a name with another server's tool", () => {
    expect(resolve({ github: ["search", "open"], jira: ["search"], web: ["search", "fetch"] })).toEqual({
      github: { search: "github_search", open: "open" },
      jira: { search: "jira_search" },
      web: { search: "web_search", fetch: "fetch" },
    });
  });

  it("prefixes an MCP tool that has the name of an existing tool, never the existing one", () => {
    expect(resolve({ shop: ["load_orders", "greet"] }, ["load_orders"])).toEqual({
      shop: { load_orders: "shop_load_orders", greet: "greet" },
    });
  });

  it("refuses when the prefixed name is taken too", () => {
    let error: unknown;
    try {
      resolve({ shop: ["greet", "shop_greet"] }, ["greet"]);
    } catch (caught) {
      error = caught;
    }
    expect(McpServerError.isInstance(error)).toBe(true);
    expect((error as McpServerError).message).toBe(
      "MCP server 'shop': tool 'shop_greet' would be offered as 'shop_greet', but that name is already taken by tool 'greet' of MCP server 'shop'. Rename the server (its key in 'servers') or one of the tools.",
    );
  });
});
