import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent } from "../src/index.ts";
import { type OpenAIFixture, startOpenAIFixture } from "../src/testing/openai-fixture.ts";
import { providerName } from "../src/tracing/provider-name.ts";
import { conventionProblems } from "./genai-conventions.ts";
import { recordSpansInMemory } from "./otel-setup.ts";

// Issue 43 #6: the spans of a run with the real OpenAI client (over a local OpenAI-compatible
// fixture), read through the official SDK, use only what the GenAI semantic conventions define
// (genai-conventions.ts), and chat spans name their provider. The code-action pattern's
// execute_program span is checked in tracing.docker.test.ts.

const exporter = recordSpansInMemory();
let fixture: OpenAIFixture | undefined;
afterAll(async () => fixture?.close());

const lookup = tool(async ({ city }: { city: string }) => ({ city, population: 522_000 }), {
  name: "lookup_city",
  description: "Population of a city.",
  schema: z.object({ city: z.string() }),
});

describe("GenAI semantic conventions (official SDK)", () => {
  it("an openai:gpt-5-mini run: chat spans say gen_ai.provider.name openai; every gen_ai.* key and operation is defined", async () => {
    fixture = await startOpenAIFixture({
      replies: [{ toolCalls: [{ name: "lookup_city", args: { city: "Lyon" } }] }, "Lyon has 522,000 people."],
    });
    const model = new ChatOpenAI({
      model: "gpt-5-mini",
      apiKey: "test-key",
      configuration: { baseURL: fixture.baseURL },
    });
    await using agent = await buildAgent({ model, extraTools: [lookup] });
    await agent.invoke("How many people live in Lyon?");
    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(chat.attributes["gen_ai.provider.name"]).toBe("openai");
    expect(spans.map((span) => span.attributes["gen_ai.operation.name"])).toContain("execute_tool");
    expect(conventionProblems(spans)).toEqual([]);
  });

  it("the provider of each LangChain class is the conventions' well-known value", () => {
    const openai = new ChatOpenAI({ model: "gpt-5-mini", apiKey: "test-key" });
    expect(providerName(openai)).toBe("openai");
    expect(providerName(openai.withRetry())).toBe("openai");
  });
});
