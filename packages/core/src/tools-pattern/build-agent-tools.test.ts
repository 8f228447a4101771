import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent } from "../build-agent.ts";
import { ToolCallingUnsupportedError } from "../errors/tool-calling-unsupported-error.ts";
import { type OpenAIFixture, ScriptedChatModel, startOpenAIFixture } from "../testing/index.ts";

// The tools pattern end to end, through buildAgent (no sandbox: no container is involved).

const lookups: string[] = [];
const lookupCity = tool(
  async ({ city }) => {
    lookups.push(city);
    return { city, population: city === "Lyon" ? 522_000 : 0 };
  },
  {
    name: "lookup_city",
    description: "Population of a city.",
    schema: z.object({ city: z.string().describe("The city's name.") }),
  },
);

afterEach(() => {
  lookups.length = 0;
});

describe("buildAgent with the tools pattern", () => {
  it("is the default pattern: extra tools are called natively and the answer is the model's text", async () => {
    const trace: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => trace.push(JSON.parse(line).msg) });
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "lookup_city", args: { town: "Lyon" } }] },
      { toolCalls: [{ name: "lookup_city", args: { city: "Lyon" } }] },
      "Lyon has about 522,000 inhabitants.",
    ]);
    await using agent = await buildAgent({ model, extraTools: [lookupCity], traceTools: true, logger });
    expect(agent.pattern).toBe("tools");

    const result = await agent.invoke({
      messages: [{ role: "user", content: "How many people live in Lyon?" }],
    });

    expect(result.answer).toBe("Lyon has about 522,000 inhabitants.");
    expect(result.messages.at(-1)?.type).toBe("ai");
    // The schema failure went back to the model as text, recorded as "invalid".
    expect(result.toolCalls.map((call) => call.status)).toEqual(["invalid", "ok"]);
    expect(String(model.calls[1]?.messages.at(-1)?.content)).toMatch(
      /^Error: Invalid input for tool 'lookup_city': town: unknown key; the keys are: city\. Call it again with arguments that match its schema\.$/,
    );
    expect(lookups).toEqual(["Lyon"]);
    expect(trace).toContain('-> Invoking tool: lookup_city with {"city":"Lyon"}');
    expect(trace).toContain('<- Tool result from lookup_city: {"city":"Lyon","population":522000}');
  });

  it("refuses, at build time, a model without native tool calling", async () => {
    class CompletionOnly extends BaseChatModel {
      _llmType() {
        return "completion-only";
      }
      async _generate(): Promise<ChatResult> {
        throw new Error("not called");
      }
    }
    const building = buildAgent({
      model: new CompletionOnly({}),
      pattern: "tools",
      extraTools: [lookupCity],
    });
    await expect(building).rejects.toSatisfy((error) => ToolCallingUnsupportedError.isInstance(error));
  });

  describe("over HTTP with the real ChatOpenAI client", () => {
    let fixture: OpenAIFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
    });

    it("sends the tool definitions and answers each call id with a tool message", async () => {
      fixture = await startOpenAIFixture({
        replies: [
          { toolCalls: [{ name: "lookup_city", args: { city: "Lyon" }, id: "call_lyon" }] },
          "522,000.",
        ],
      });
      const model = new ChatOpenAI({
        model: "gpt-5-mini",
        apiKey: "test",
        configuration: { baseURL: fixture.baseURL },
      });
      await using agent = await buildAgent({ model, extraTools: [lookupCity] });
      const result = await agent.invoke({ messages: [{ role: "user", content: "Lyon?" }] });

      expect(result.answer).toBe("522,000.");
      const [first, second] = fixture.requests.map((request) => request.body);
      expect(first?.tools).toEqual([
        {
          type: "function",
          function: expect.objectContaining({
            name: "lookup_city",
            description: "Population of a city.",
            parameters: expect.objectContaining({ type: "object", required: ["city"] }),
          }),
        },
      ]);
      const messages = second?.messages as Array<Record<string, unknown>>;
      expect(messages.at(-1)).toMatchObject({
        role: "tool",
        tool_call_id: "call_lyon",
        content: '{"city":"Lyon","population":522000}',
      });
      expect(messages.at(-2)).toMatchObject({
        role: "assistant",
        tool_calls: [expect.objectContaining({ id: "call_lyon" })],
      });
    });

    it("asks OpenAI for the answer's shape natively (response_format json_schema) with the tools, and still checks the reply", async () => {
      fixture = await startOpenAIFixture({
        replies: [
          { toolCalls: [{ name: "lookup_city", args: { city: "Lyon" }, id: "call_lyon" }] },
          '{"city": "Lyon", "population": "many"}',
          '{"city": "Lyon", "population": 522000}',
        ],
      });
      const model = new ChatOpenAI({
        model: "gpt-5-mini",
        apiKey: "test",
        configuration: { baseURL: fixture.baseURL },
      });
      const answer = z.object({ city: z.string(), population: z.number() });
      await using agent = await buildAgent({ model, extraTools: [lookupCity], responseFormat: answer });
      const result = await agent.invoke({ messages: [{ role: "user", content: "Lyon?" }] });

      expect(result.structured).toEqual({ city: "Lyon", population: 522000 });
      expect(fixture.requests).toHaveLength(3);
      for (const { body } of fixture.requests) {
        expect(body.tools).toHaveLength(1);
        expect(body.response_format).toEqual({
          type: "json_schema",
          json_schema: {
            name: "answer",
            strict: false,
            schema: expect.objectContaining({ type: "object", required: ["city", "population"] }),
          },
        });
      }
      // The native format is a request, not a guarantee: the wrong reply was sent back by path.
      const messages = fixture.requests[2]?.body.messages as
        | Array<{ role: string; content: string }>
        | undefined;
      const repair = messages?.at(-1);
      expect(repair?.role).toBe("user");
      expect(repair?.content).toContain("population");
    });

    it("keeps to the text check where the API would refuse the native format: an answer that is not an object", async () => {
      fixture = await startOpenAIFixture({ replies: ["[1, 2, 3]"] });
      const model = new ChatOpenAI({
        model: "gpt-5-mini",
        apiKey: "test",
        configuration: { baseURL: fixture.baseURL },
      });
      await using agent = await buildAgent({ model, responseFormat: z.array(z.number()) });
      const result = await agent.invoke("Three numbers?");
      expect(result.structured).toEqual([1, 2, 3]);
      expect(fixture.requests[0]?.body.response_format).toBeUndefined();
    });

    it("asks for the native format with no tools too, through a withRetry wrapper", async () => {
      fixture = await startOpenAIFixture({ replies: ['{"total": 7}'] });
      const model = new ChatOpenAI({
        model: "gpt-5-mini",
        apiKey: "test",
        configuration: { baseURL: fixture.baseURL },
      }).withRetry({ stopAfterAttempt: 2 });
      const schema = { type: "object", properties: { total: { type: "number" } }, required: ["total"] };
      await using agent = await buildAgent({ model, responseFormat: schema });
      const result = await agent.invoke("Total?");
      expect(result.structured).toEqual({ total: 7 });
      expect(fixture.requests[0]?.body.response_format).toMatchObject({
        type: "json_schema",
        json_schema: { name: "answer", schema },
      });
    });
  });
});
