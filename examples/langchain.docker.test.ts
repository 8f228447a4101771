import { startAnthropicFixture } from "@codeaction/core/testing";
import { describe, expect, it } from "vitest";
import { containersLeftBy, type ExampleRun, runExample } from "./run-example.ts";

// The examples docs/langchain.md shows, each run as a user runs it (a separate process, no
// OPENAI_API_KEY: the model plays its replay) against the real engine.

async function run(name: string, options: { env?: Record<string, string> } = {}): Promise<ExampleRun> {
  const result = await runExample(`langchain/${name}`, options);
  expect(result.exitCode, `${name} failed:\n${result.stderr}`).toBe(0);
  expect(await containersLeftBy(result.pid)).toEqual([]);
  return result;
}

describe.concurrent("the LangChain examples, run as processes", () => {
  it("typed-answer.ts: the wrong shape is repaired, and structured is the typed list", async () => {
    const { stdout } = await run("typed-answer");
    expect(stdout.trim().split("\n")).toEqual([
      "North America   108664.00",
      "LATAM            81328.00",
      "EMEA             77689.00",
      "APAC             65023.00",
      "attempts: invalid-result, ok",
    ]);
  });

  it("cancel-on-disconnect.ts: the client leaves once the program starts, and the turn is cancelled", async () => {
    const { stdout } = await run("cancel-on-disconnect");
    expect(stdout).toContain('client got {"step":"program-start"}');
    expect(stdout).toContain("client disconnects");
    expect(stdout).toMatch(/^server: cancelled run_[0-9a-f]{12}: /m);
    expect(stdout).not.toContain("answered");
  });

  it("callback-handler.ts prints one run tree: the turn, its attempt, the model call and the tool call", async () => {
    const { stdout } = await run("callback-handler");
    expect(stdout.trim().split("\n")).toEqual([
      "chain currency-desk",
      "  chain attempt 1",
      "    llm ScriptedChatModel",
      '    tool exchange_rate {"currency":"EUR"}',
      "answer: 230.00 EUR",
    ]);
  });

  it("stream-events.ts: streamEvents carries the steps, the model call and the tool call, in order", async () => {
    const { stdout } = await run("stream-events");
    const lines = stdout.trim().split("\n");
    // The model's own start comes from its callbacks, the steps from the agent's stream: the model
    // starts before the step that says it ended.
    const thinking = lines.indexOf("model ScriptedChatModel thinking");
    expect(thinking).toBeGreaterThanOrEqual(0);
    expect(thinking).toBeLessThan(lines.indexOf("step model-end"));
    expect(lines.filter((line) => line !== "model ScriptedChatModel thinking")).toEqual([
      "step model-start",
      "step model-end",
      "step program-start",
      "step tool-call",
      'tool exchange_rate {"currency":"EUR"}',
      "step tool-result",
      "step program-output",
      "step program-end",
      "step answer",
      "answer: 230.00 EUR",
    ]);
  });

  it("agent-as-tool.ts: LangChain's createAgent calls the agent as a tool and answers with its count", async () => {
    const { stdout } = await run("agent-as-tool");
    expect(stdout).toContain("tool: 117");
    expect(stdout).toContain("ai: 117 orders were placed in EMEA.");
  });

  it("provider-string.ts drives code-action through @langchain/anthropic against a Messages-API fixture", async () => {
    const program = 'orders = load_orders()\nprint(f"RESULT: {len(orders)}")';
    const fixture = await startAnthropicFixture([
      [{ type: "text", text: `\`\`\`python\n${program}\n\`\`\`` }],
    ]);
    try {
      const { stdout } = await run("provider-string", {
        env: { ANTHROPIC_API_KEY: "sk-ant-example", ANTHROPIC_BASE_URL: fixture.baseURL },
      });
      expect(stdout).toContain("answer: 500");
      expect(stdout).toContain("tokens: 12 in, 7 out");
      expect(fixture.requests[0]).toMatchObject({ path: "/v1/messages", model: "claude-sonnet-4-5" });
    } finally {
      await fixture.close();
    }
  });
});
