import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { countingSandbox, turnSettings } from "../../test/turn-fixtures.ts";
import { buildAgent } from "../build-agent.ts";
import { parseBuildAgentOptions } from "../build-agent-options.ts";
import { ConfigError } from "../errors/config-error.ts";
import { ScriptedChatModel } from "../testing/scripted-chat-model.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { createCodeActionTurn } from "../turn/turn.ts";
import { readSearchQueries } from "./function-lookup.ts";
import { defaultDiscoverySettings, estimateTokens, renderToolIndex } from "./tool-index.ts";
import { createToolSearch } from "./tool-search.ts";

// Discovery at the turn: which prompt the model gets, and how a ```search reply is answered. No
// container starts here (the sandbox refuses); the run with a real container is in
// packages/cli/test/tool-discovery.docker.test.ts.

const domains = ["billing", "crm", "inventory", "shipping", "weather", "payroll"];
const nouns = [
  "invoice",
  "customer",
  "stock",
  "parcel",
  "forecast",
  "salary",
  "report",
  "ticket",
  "refund",
  "quota",
];

/** `count` tools named <domain>_get_<noun>_<n>, each with a one-line description and four typed arguments. */
function catalogue(count: number): ToolSpec[] {
  return Array.from({ length: count }, (_, index) => {
    const domain = domains[index % domains.length] ?? "";
    const noun = nouns[Math.floor(index / domains.length) % nouns.length] ?? "";
    return {
      name: `${domain}_get_${noun}_${index}`,
      description: `Returns the ${noun} records of the ${domain} system, newest first.`,
      origin: "tool",
      inputSchema: {
        type: "object",
        properties: {
          account_id: { type: "string", description: "the account" },
          limit: { type: "integer", description: "most records to return" },
          include_archived: { type: "boolean" },
          region: { type: "string", enum: ["emea", "apac", "amer"] },
        },
        required: ["account_id"],
      },
      invoke: async () => null,
    };
  });
}

const planted: ToolSpec = {
  name: "convert_currency",
  description: "Converts an amount of money between two currencies at today's exchange rate.",
  origin: "mcp:rates",
  inputSchema: {
    type: "object",
    properties: {
      amount: { type: "number" },
      from_currency: { type: "string" },
      to_currency: { type: "string" },
    },
    required: ["amount", "from_currency", "to_currency"],
  },
  invoke: async () => null,
};

const settings = { ...turnSettings, maxRepairs: 1 };

async function runTurn(tools: ToolSpec[], replies: string[], discovery = settings as object) {
  const model = new ScriptedChatModel(replies);
  const sandbox = countingSandbox();
  const turn = createCodeActionTurn({ model, sandbox, tools, settings: { ...settings, ...discovery } });
  const error = await (async () => {
    for await (const _event of turn.stream([new HumanMessage("What is 100 EUR in USD?")], "run-1"));
  })().catch((thrown: unknown) => thrown);
  const texts = model.calls.map((call) => call.messages.map((message) => String(message.content)));
  return { model, sandbox, error, texts };
}

const program = "```python\nprint('RESULT: 1')\n```";
const search = "```search\nexchange rate between two currencies\n```";

describe("with a small catalogue nothing changes", () => {
  it("10 tools: every stub in the prompt, the same prompt as with discovery off, and one model call", async () => {
    const tools = catalogue(10);
    const on = await runTurn(tools, [program]);
    const off = await runTurn(tools, [program], { discovery: false });
    expect(on.texts[0]).toEqual(off.texts[0]);
    expect(on.texts[0]?.[0]).toContain("def billing_get_invoice_0(");
    expect(on.texts[0]?.[0]).toContain("def shipping_get_customer_9(");
    expect(on.texts[0]?.[0]).not.toContain("```search");
    expect(on.model.calls).toHaveLength(1);
    expect(on.sandbox.created).toBe(1);
  });

  it("10 tools: a ```search reply is not answered, it is a reply with no program", async () => {
    const { texts, sandbox } = await runTurn(catalogue(10), [search, program]);
    expect(texts[1]?.at(-1)).toContain("No program was run: it had only a search block");
    expect(texts[1]?.at(-1)).not.toContain("Search results");
    expect(sandbox.created).toBe(1);
  });
});

describe("with a large catalogue the prompt carries an index and the model searches", () => {
  const tools = [...catalogue(999), planted];

  it("1,000 tools: the first request is an index under the budget, not the stubs", async () => {
    const { texts } = await runTurn(tools, [program]);
    const system = texts[0]?.[0] ?? "";
    expect(system).toContain("You have 1000 functions, too many to show in full here");
    expect(system).toContain("billing_* (167)");
    expect(system).toContain("mcp:rates (1 function): convert_currency");
    expect(system).not.toContain("def billing_get_invoice_0(");
    const firstRequest = (texts[0] ?? []).join("\n");
    expect(estimateTokens(firstRequest)).toBeLessThan(defaultDiscoverySettings.maxStubTokens + 1500);
  });

  it("a search is answered with the best matches' signatures, then the program runs (one container)", async () => {
    const { texts, sandbox, model } = await runTurn(tools, [search, program]);
    expect(model.calls).toHaveLength(2);
    const answer = texts[1]?.at(-1) ?? "";
    expect(answer).toMatch(/^Search results/);
    const firstSignature = answer.indexOf("def ");
    expect(answer.slice(firstSignature)).toMatch(/^def convert_currency\(\*, amount: float/);
    expect(answer).toContain("2 searches left");
    expect(texts[1]?.at(-2)).toBe(search);
    expect(sandbox.created).toBe(1);
  });

  it("searches are capped: past maxSearches a search reply is a reply with no program", async () => {
    const { texts, sandbox, model } = await runTurn(tools, [search, search, program], {
      discovery: { ...defaultDiscoverySettings, maxSearches: 1 },
    });
    expect(model.calls).toHaveLength(3);
    expect(texts[1]?.at(-1)).toContain("no searches are left");
    expect(texts[2]?.at(-1)).toContain("No program was run: it had only a search block");
    expect(sandbox.created).toBe(1);
  });

  it("41 small tools turn discovery on by count (maxTools 40); maxTools 0 turns it on for one tool", async () => {
    const byCount = await runTurn(catalogue(41), [program]);
    expect(byCount.texts[0]?.[0]).toContain("You have 41 functions");
    const forced = await runTurn([planted], [program], {
      discovery: { ...defaultDiscoverySettings, maxTools: 0 },
    });
    expect(forced.texts[0]?.[0]).toContain("You have 1 function,");
    expect(forced.texts[0]?.[0]).toContain(
      "- convert_currency(amount, from_currency, to_currency): Converts",
    );
  });
});

describe("readSearchQueries", () => {
  it("reads one query a line, and nothing from a reply that holds a program", () => {
    expect(readSearchQueries("```search\n- weather in Paris\n\nconvert_currency\n```")).toEqual([
      "weather in Paris",
      "convert_currency",
    ]);
    expect(readSearchQueries(`${search}\n${program}`)).toBeUndefined();
    expect(readSearchQueries("no block here")).toBeUndefined();
  });
});

describe("codeAction.discovery", () => {
  const model = new ScriptedChatModel([]);
  const parse = (discovery: unknown) =>
    parseBuildAgentOptions({ model, pattern: "code-action", codeAction: { discovery } } as never).codeAction
      .discovery;

  it("takes the settings docs/code-action.md shows, fills the rest, and takes false", () => {
    expect(parse({ maxTools: 80, maxStubTokens: 8000, maxSearches: 2, resultsPerQuery: 8 })).toEqual({
      maxTools: 80,
      maxStubTokens: 8000,
      maxSearches: 2,
      resultsPerQuery: 8,
    });
    expect(parse({ maxTools: 0 })).toEqual({ ...defaultDiscoverySettings, maxTools: 0 });
    expect(parse(false)).toBe(false);
  });

  it("refuses an unknown discovery key before anything starts", async () => {
    const error = await buildAgent({
      model,
      pattern: "code-action",
      codeAction: { discovery: { maxTool: 10 } },
    } as never).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      "unknown codeAction.discovery option 'maxTool' (did you mean 'maxTools'?). Valid codeAction.discovery options: maxStubTokens, maxTools, maxSearches, resultsPerQuery",
    );
  });
});

describe("renderToolIndex", () => {
  const search = createToolSearch([...catalogue(12), planted]);

  it("gives the richest index that fits the budget: lines, then names, then prefixes, then counts", () => {
    const lines = renderToolIndex(search, 10_000);
    expect(lines).toContain(
      "tool (12 functions):\n- billing_get_invoice_0(account_id, limit, include_archived, region): Returns",
    );
    const names = renderToolIndex(search, estimateTokens(lines) - 1);
    expect(names).toMatch(/^tool \(12 functions\): billing_get_invoice_0, crm_get_invoice_1, /);
    expect(names).toContain("mcp:rates (1 function): convert_currency");
    const prefixes = renderToolIndex(search, estimateTokens(names) - 1);
    expect(prefixes).toBe(
      [
        "tool (12 functions): billing_* (2), crm_* (2), inventory_* (2), shipping_* (2), weather_* (2), payroll_* (2)",
        "mcp:rates (1 function): convert_currency",
      ].join("\n"),
    );
    expect(renderToolIndex(search, estimateTokens(prefixes) - 1)).toBe(
      "tool: 12 functions\nmcp:rates: 1 function",
    );
  });
});
