import { type AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type OpenAIFixture, startOpenAIFixture } from "./openai-fixture.ts";

let fixture: OpenAIFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function client(baseURL: string) {
  return new ChatOpenAI({
    model: "gpt-5-mini",
    apiKey: "test-key",
    maxRetries: 0,
    configuration: { baseURL },
  });
}

describe("startOpenAIFixture", () => {
  it("answers the real ChatOpenAI client and records what it sent", async () => {
    fixture = await startOpenAIFixture({ replies: ["Hello from the fixture."] });
    expect(fixture.baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const reply = await client(fixture.baseURL).invoke([new HumanMessage("Hi")]);
    expect(reply.content).toBe("Hello from the fixture.");
    expect(reply.usage_metadata?.total_tokens).toBeGreaterThan(0);
    expect(fixture.requests).toHaveLength(1);
    expect(fixture.requests[0]?.path).toBe("/v1/chat/completions");
    expect(fixture.requests[0]?.body.model).toBe("gpt-5-mini");
    expect(fixture.requests[0]?.body.messages).toEqual([{ role: "user", content: "Hi" }]);
  });

  it("streams when the client asks for it", async () => {
    const long = "x".repeat(150);
    fixture = await startOpenAIFixture({ replies: [long] });
    const chunks: string[] = [];
    for await (const chunk of await client(fixture.baseURL).stream("Hi")) chunks.push(String(chunk.content));
    expect(chunks.join("")).toBe(long);
    expect(chunks.filter(Boolean).length).toBeGreaterThan(1);
    expect(fixture.requests[0]?.body.stream).toBe(true);
  });

  it("plays tool calls, plain and streamed", async () => {
    const lookup = tool(async () => "x", {
      name: "lookup",
      description: "Looks up.",
      schema: z.object({ key: z.string() }),
    });
    fixture = await startOpenAIFixture({
      replies: [
        { toolCalls: [{ name: "lookup", args: { key: "a" } }] },
        { toolCalls: [{ name: "lookup", args: { key: "b" } }] },
      ],
    });
    const plain = await client(fixture.baseURL).bindTools([lookup]).invoke("go");
    expect(plain.tool_calls?.map((call) => [call.name, call.args])).toEqual([["lookup", { key: "a" }]]);
    // .stream(), not invoke with streaming: true: that path counts tokens with tiktoken, which
    // downloads its encodings and hangs without a network.
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await client(fixture.baseURL).bindTools([lookup]).stream("go")) {
      streamed = streamed ? streamed.concat(chunk) : chunk;
    }
    expect(streamed?.tool_calls?.map((call) => [call.name, call.args])).toEqual([["lookup", { key: "b" }]]);
    expect(fixture.requests[0]?.body.tools).toHaveLength(1);
  });

  it("fails with a clear error when the replies run out", async () => {
    fixture = await startOpenAIFixture({ replies: [] });
    await expect(client(fixture.baseURL).invoke("Hi")).rejects.toThrow(/no reply left for request #1/);
  });
});
