import { describe, expect, it } from "vitest";
import type { ProgramRunner } from "../program/program-runner.ts";
import { renderStubSignatures } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { listFunctions } from "./list-functions.ts";

function toolsNamed(names: string[]): ToolSpec[] {
  return names.map((name) => ({
    name,
    description: `Does ${name.replaceAll("_", " ")}.`,
    origin: "mcp:test",
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
    invoke: async () => null,
  }));
}

/** Only what list_functions reads of a runner: its tools and their stubs. */
function runnerOf(tools: ToolSpec[]): ProgramRunner {
  return { tools, stubSignatures: renderStubSignatures(tools) } as unknown as ProgramRunner;
}

type Listed = { functions: Array<{ function: string; signature?: string }>; total: number; index?: string };

const small = runnerOf(toolsNamed(["get_weather", "convert_currency", "list_orders"]));
const large = runnerOf(
  toolsNamed(Array.from({ length: 60 }, (_, index) => `crm_item_${index}`).concat(["convert_currency"])),
);

describe("list_functions", () => {
  it("without a query, on a small catalogue: every stub", () => {
    const result = listFunctions(small, {});
    const listed = result.structuredContent as Listed;
    expect(listed.functions.map((entry) => entry.function)).toEqual([
      "get_weather",
      "convert_currency",
      "list_orders",
    ]);
    expect((result.content[0] as { text: string }).text).toContain("def list_orders(");
  });

  it("with a query: only the matches, best first, with their signatures", () => {
    const listed = listFunctions(small, { query: "currency conversion rate" }).structuredContent as Listed;
    expect(listed.functions.map((entry) => entry.function)).toEqual(["convert_currency"]);
    expect(listed.functions[0]?.signature).toMatch(/^def convert_currency\(/);
    expect(listed.total).toBe(3);
    const top = listFunctions(large, { query: "crm item", limit: 2 }).structuredContent as Listed;
    expect(top.functions).toHaveLength(2);
  });

  it("without a query, on a catalogue over the budget: the index and no stubs", () => {
    const result = listFunctions(large, undefined);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toContain("61 functions, too many to list in full");
    expect(text).not.toContain("def ");
    expect((result.structuredContent as Listed).functions).toEqual([]);
    expect((result.structuredContent as Listed).index).toContain("- crm_item_59(id): Does crm item 59.");
  });

  it("refuses a query that is not a string and a limit out of range, naming the fix", () => {
    expect(listFunctions(small, { query: 3 })).toMatchObject({ isError: true });
    const refused = listFunctions(small, { query: "x", limit: 500 });
    expect((refused.content[0] as { text: string }).text).toBe(
      "list_functions: `limit` must be a whole number from 1 to 50.",
    );
  });
});
