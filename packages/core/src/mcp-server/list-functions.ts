import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { type DiscoveryPlan, defaultDiscoverySettings, planDiscovery } from "../discovery/tool-index.ts";
import { createToolSearch, type ToolSearch } from "../discovery/tool-search.ts";
import type { ProgramRunner } from "../program/program-runner.ts";
import { buildStubs, type StubbedTool } from "../prompt/python-stubs.ts";

/**
 * list_functions, with discovery for large catalogues: with `query`, only the best matches (BM25
 * over names, descriptions and argument names; core's tool-search.ts), ranked, with their full
 * signatures. Without one, every stub, unless the catalogue is over code-action's discovery budget
 * (40 tools or about 4,000 tokens of stubs): then a compact index, and the hint to pass a query.
 */

/** Matches returned for a query unless `limit` says otherwise, and at most. */
const defaultLimit = 8;
const maxLimit = 50;
const maxQueryCharacters = 500;

const listOutputSchema = {
  type: "object",
  properties: {
    functions: {
      type: "array",
      items: {
        type: "object",
        properties: {
          function: { type: "string", description: "the Python name a program calls" },
          tool: { type: "string", description: "the wrapped tool's own name" },
          origin: { type: "string", description: "mcp:<server> or csv" },
          signature: { type: "string", description: "left out in the index of a large catalogue" },
          score: { type: "number", description: "with a query: how well it matches (higher first)" },
        },
        required: ["function", "tool", "origin"],
      },
    },
    total: { type: "integer", description: "how many functions the server has in all" },
    index: {
      type: "string",
      description: "for a large catalogue listed without a query: the index of its names",
    },
  },
  required: ["functions", "total"],
} as const;

/** The catalogue of one runner: its stubs, and the discovery plan when it is over the budget. */
type Catalogue = { stubs: StubbedTool[]; plan: DiscoveryPlan | undefined; search: ToolSearch };

// One per runner: over HTTP each request builds its own server, and the index is built once.
const catalogues = new WeakMap<ProgramRunner, Catalogue>();

function catalogueOf(runner: ProgramRunner): Catalogue {
  let catalogue = catalogues.get(runner);
  if (!catalogue) {
    const tools = [...runner.tools];
    const stubs = buildStubs(tools);
    const plan = planDiscovery(tools, stubs, defaultDiscoverySettings);
    catalogue = { stubs, plan, search: plan?.search ?? createToolSearch(tools, stubs) };
    catalogues.set(runner, catalogue);
  }
  return catalogue;
}

/** True when the runner's catalogue is over the budget, so list_functions without a query gives an index. */
export function isLargeCatalogue(runner: ProgramRunner): boolean {
  return catalogueOf(runner).plan !== undefined;
}

/** The list_functions tool as a client sees it. */
export function listFunctionsTool(): Tool {
  return {
    name: "list_functions",
    description: [
      "Lists the Python functions a run_program program can call: each wrapped tool as a typed function with its docstring (arguments, what it returns, the errors it raises).",
      `With \`query\` (words from the task, or a function's name): only the best matches, ranked, at most \`limit\` (default ${defaultLimit}).`,
      "Without a query: every function, or for a large catalogue an index of their names (then search it with a query before writing the program).",
    ].join("\n"),
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "what the functions should do", maxLength: maxQueryCharacters },
        limit: { type: "integer", minimum: 1, maximum: maxLimit, description: `default ${defaultLimit}` },
      },
    },
    outputSchema: listOutputSchema as unknown as Tool["outputSchema"],
    annotations: { readOnlyHint: true, openWorldHint: false },
  };
}

/** A list_functions call: ranked matches for a query, else every stub or the index. */
export function listFunctions(
  runner: ProgramRunner,
  args: Record<string, unknown> | undefined,
): CallToolResult {
  const query = args?.query;
  const limit = args?.limit;
  if (query !== undefined && (typeof query !== "string" || query.length > maxQueryCharacters)) {
    return errorResult(
      `list_functions: \`query\` must be a string of at most ${maxQueryCharacters} characters.`,
    );
  }
  if (
    limit !== undefined &&
    !(Number.isInteger(limit) && (limit as number) >= 1 && (limit as number) <= maxLimit)
  ) {
    return errorResult(`list_functions: \`limit\` must be a whole number from 1 to ${maxLimit}.`);
  }
  const catalogue = catalogueOf(runner);
  const total = runner.tools.length;
  if (typeof query === "string" && query.trim() !== "") {
    return searchResult(catalogue, query, (limit as number | undefined) ?? defaultLimit, total);
  }
  if (catalogue.plan) return indexResult(catalogue.plan, total);
  const functions = catalogue.stubs.map((stub, index) => ({
    function: stub.functionName,
    tool: stub.toolName,
    origin: runner.tools[index]?.origin ?? "",
    signature: stub.signature,
  }));
  const text =
    total === 0
      ? "No functions: the server wraps no tools."
      : `# Already imported in every run_program program.\n\n${runner.stubSignatures}`;
  return { content: [{ type: "text", text }], structuredContent: { functions, total } };
}

function searchResult(catalogue: Catalogue, query: string, limit: number, total: number): CallToolResult {
  const matches = catalogue.search.search(query, { limit });
  const functions = matches.map(({ tool, stub, score }) => ({
    function: stub.functionName,
    tool: tool.name,
    origin: tool.origin,
    signature: stub.signature,
    score: Math.round(score * 1000) / 1000,
  }));
  const text =
    matches.length === 0
      ? `No function matches ${JSON.stringify(query)}: try other words, or list_functions without a query for the index.`
      : [
          `# The best ${matches.length} of ${total} functions for ${JSON.stringify(query)}, best first; every function is already imported in run_program programs.`,
          ...matches.map(({ stub }) => stub.signature),
        ].join("\n\n");
  return { content: [{ type: "text", text }], structuredContent: { functions, total } };
}

/** The index alone: listing a thousand functions in the structured content would cost what the index saves. */
function indexResult(plan: DiscoveryPlan, total: number): CallToolResult {
  const text = [
    `# ${total} functions, too many to list in full: their index. Call list_functions with a \`query\` for the full signatures of the best matches; every function is already imported in run_program programs.`,
    "",
    plan.index,
  ].join("\n");
  return {
    content: [{ type: "text", text }],
    structuredContent: { functions: [], total, index: plan.index },
  };
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
