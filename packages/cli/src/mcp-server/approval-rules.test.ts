import type { ToolSpec } from "@codeaction/core";
import { describe, expect, it } from "vitest";
import { approvalRules, offeredTools } from "./approval-rules.ts";

const tool = (name: string): ToolSpec => ({
  name,
  description: "",
  inputSchema: { type: "object" },
  origin: "mcp:test",
  invoke: async () => null,
});
const tools = [tool("read_graph"), tool("delete-entities"), tool("get_sum")];
const call = (name: string) => ({ tool: name, args: {}, runId: "run_1" });

describe("approvalRules (--allow, --deny)", () => {
  it("without rules there is no hook: every call runs", () => {
    expect(approvalRules(tools, { allow: [], deny: [] }, "mcp")).toBeUndefined();
  });

  it("--deny refuses that tool, named by its own or its Python name, and lets the others run", async () => {
    for (const name of ["delete-entities", "delete_entities"]) {
      const hook = approvalRules(tools, { allow: [], deny: [name] }, "mcp")!;
      expect(await hook(call("delete-entities"))).toEqual({
        approved: false,
        reason: "delete-entities is denied by the server's --deny rule",
      });
      expect(await hook(call("read_graph"))).toBe(true);
    }
  });

  it("--allow runs only the listed tools, and --deny wins over it", async () => {
    const hook = approvalRules(tools, { allow: ["read_graph", "get_sum"], deny: ["get_sum"] }, "mcp")!;
    expect(await hook(call("read_graph"))).toBe(true);
    expect(await hook(call("get_sum"))).toMatchObject({
      approved: false,
      reason: expect.stringMatching(/--deny/),
    });
    expect(await hook(call("delete-entities"))).toEqual({
      approved: false,
      reason: "delete-entities is not in the server's --allow list",
    });
  });

  it("a rule naming no tool is a usage error listing the tools", () => {
    expect(() => approvalRules(tools, { allow: ["read_grap"], deny: [] }, "mcp")).toThrow(
      '--allow "read_grap" names no tool; the tools are: read_graph, delete-entities, get_sum',
    );
  });

  it("offers only the tools the rules let run, in order (all of them without rules)", () => {
    const names = (rules: { allow: string[]; deny: string[] }) =>
      offeredTools(tools, rules, "mcp").map((offered) => offered.name);
    expect(names({ allow: [], deny: [] })).toEqual(["read_graph", "delete-entities", "get_sum"]);
    expect(names({ allow: [], deny: ["delete_entities"] })).toEqual(["read_graph", "get_sum"]);
    expect(names({ allow: ["get_sum", "read_graph"], deny: ["get_sum"] })).toEqual(["read_graph"]);
  });
});
