import { join } from "node:path";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { everythingServer } from "./reference-servers.ts";
import { binPath, repositoryRoot, runCli } from "./run-cli.ts";
import { catalogueAnswer } from "./tool-catalogue.ts";

// A thousand tools: 990 generated ones (fixtures/catalogue-server.ts, an MCP server over stdio) and
// the reference server-everything from npm (13 tools), served to a code-action agent through the
// CLI with a local OpenAI-compatible model fixture, and through `codeaction mcp` to the official
// SDK client; real containers run the programs.

const catalogueServer = `node ${join(repositoryRoot, "packages/cli/test/fixtures/catalogue-server.ts")} 990`;
const servers = ["--server", catalogueServer, "--server", everythingServer];

/** The budget the first request must stay under (codeAction.discovery's default), in tokens. */
const budgetTokens = 4000;
/** A conservative count: o200k averages about four characters a token on this text; three counts high. */
const tokensAtMost = (text: string) => Math.ceil(text.length / 3);

const program = [
  'forecast = weather_get_forecast(forecast_id="paris")',
  'total = get_sum(a=forecast["value"], b=7)',
  'print(f"RESULT: {total}")',
].join("\n");
const forecast = catalogueAnswer("weather_get_forecast", { forecast_id: "paris" }).value;
const expectedAnswer = `The sum of ${forecast} and 7 is ${forecast + 7}.`;
// The agent's program also calls a function it never looked up (it is in the index only).
const agentProgram = program.replace(
  'print(f"RESULT: {total}")',
  'customer = crm_get_customer(customer_id="c-1")\nprint(f"RESULT: {total} / {customer[\'value\']}")',
);
const customer = catalogueAnswer("crm_get_customer", { customer_id: "c-1" }).value;

type Message = { role: string; content: string };

describe("a code-action agent with 1,003 tools discovers the two it needs", () => {
  it("the first request carries an index under the budget; a search answers with both stubs first; the program calls both", async () => {
    const fixture = await startOpenAIFixture({
      replies: [
        "I need the forecast and a way to add.\n\n```search\nget the weather forecast\nsum of two numbers\n```",
        `\`\`\`python\n${agentProgram}\n\`\`\``,
      ],
    });
    try {
      const run = await runCli(
        [
          "ask",
          ...servers,
          "--model",
          "openai:gpt-5-mini",
          "--no-journal",
          "What is the Paris forecast value plus 7?",
        ],
        { env: { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: fixture.baseURL }, timeoutMs: 280_000 },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe(`${expectedAnswer} / ${customer}`);
      expect(fixture.requests).toHaveLength(2);

      const first = fixture.requests[0]?.body.messages as Message[];
      const firstText = first.map((message) => message.content).join("\n");
      expect(firstText).toContain("You have 1003 functions, too many to show in full here");
      expect(firstText).toContain("mcp:server_990 (990 functions): billing_* (50), crm_* (50)");
      expect(firstText).not.toContain("def weather_get_forecast(");
      expect(tokensAtMost(firstText)).toBeLessThanOrEqual(budgetTokens);

      // The second request: the search reply, then its answer with each query's best match first.
      const second = fixture.requests[1]?.body.messages as Message[];
      const answer = second.at(-1)?.content ?? "";
      const [, forecastPart = "", sumPart = ""] = answer.split(/^# "/m);
      expect(forecastPart).toMatch(
        /^get the weather forecast"\n\ndef weather_get_forecast\(\*, forecast_id: str/,
      );
      expect(sumPart).toMatch(/^sum of two numbers"\n\ndef get_sum\(\*, a: float, b: float\)/);
    } finally {
      await fixture.close();
    }
  }, 300_000);
});

function firstText(result: CallToolResult): string {
  return (result.content[0] as { text: string }).text;
}

describe("codeaction mcp with 1,003 tools, to the official SDK client", () => {
  it("list_functions with a query returns the right stubs first; without one, an index; run_program calls both", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [binPath, "mcp", ...servers],
      env: process.env as Record<string, string>,
      cwd: repositoryRoot,
      stderr: "pipe",
    });
    const client = new Client({ name: "codeaction-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([
        "list_functions",
        "run_program",
        "start_program",
        "program_result",
      ]);
      expect(tools[1]?.description).toContain("find the ones you need with list_functions({query}) first");

      const sum = (await client.callTool({
        name: "list_functions",
        arguments: { query: "sum of two numbers", limit: 3 },
      })) as CallToolResult;
      const sumFunctions = (sum.structuredContent as { functions: Array<{ function: string }> }).functions;
      expect(sumFunctions[0]).toMatchObject({
        function: "get_sum",
        tool: "get-sum",
        origin: "mcp:stdio",
      });
      expect(sumFunctions.length).toBeLessThanOrEqual(3);
      expect(firstText(sum)).toMatch(
        /^# The best \d of 1003 functions for "sum of two numbers"[^\n]*\n\ndef get_sum\(/,
      );

      const weather = (await client.callTool({
        name: "list_functions",
        arguments: { query: "get the weather forecast" },
      })) as CallToolResult;
      const weatherFunctions = (weather.structuredContent as { functions: Array<{ function: string }> })
        .functions;
      expect(weatherFunctions[0]?.function).toBe("weather_get_forecast");
      expect(weatherFunctions.map((entry) => entry.function)).toContain("weather_list_forecast");

      const index = (await client.callTool({ name: "list_functions", arguments: {} })) as CallToolResult;
      expect(firstText(index)).toContain("1003 functions, too many to list in full");
      expect(firstText(index)).not.toContain("def ");
      expect(tokensAtMost(firstText(index))).toBeLessThanOrEqual(budgetTokens);

      const ran = (await client.callTool({ name: "run_program", arguments: { program } })) as CallToolResult;
      expect(ran.isError ?? false, JSON.stringify(ran)).toBe(false);
      expect(firstText(ran)).toBe(expectedAnswer);
    } finally {
      await client.close();
    }
  }, 300_000);
});
