import { ChatAnthropic } from "@langchain/anthropic";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent, ConfigError } from "../src/index.ts";
import { loadModel } from "../src/model/model.ts";
import { startAnthropicFixture } from "../src/testing/index.ts";

const saved = { ...process.env };
afterEach(() => {
  for (const key of ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COHERE_API_KEY"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("provider strings", () => {
  it('"anthropic:<model>" loads @langchain/anthropic and drives a tools-pattern turn over its real wire format', async () => {
    const fixture = await startAnthropicFixture([
      [{ type: "tool_use", id: "toolu_1", name: "add", input: { a: 20, b: 22 } }],
      [{ type: "text", text: "The sum is 42." }],
    ]);
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    process.env.ANTHROPIC_BASE_URL = fixture.baseURL;
    try {
      const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
        name: "add",
        description: "Add two numbers.",
        schema: z.object({ a: z.number(), b: z.number() }),
      });
      await using agent = await buildAgent({ model: "anthropic:claude-sonnet-4-5", extraTools: [add] });
      const result = await agent.invoke("What is 20 + 22?");
      expect(result.answer).toBe("The sum is 42.");
      expect(result.toolCalls[0]).toMatchObject({ tool: "add", status: "ok", result: 42 });
      expect(fixture.requests[0]).toMatchObject({
        path: "/v1/messages",
        model: "claude-sonnet-4-5",
        apiKey: "sk-ant-test",
      });
      expect(JSON.stringify(fixture.requests[0]?.tools)).toContain('"name":"add"');
      // The tool result went back as Anthropic's tool_result block for the call's id.
      expect(JSON.stringify(fixture.requests[1]?.messages)).toContain('"tool_use_id":"toolu_1"');
    } finally {
      await fixture.close();
    }
  });

  it("a string for a provider whose package is not installed is a ConfigError naming the package", async () => {
    process.env.COHERE_API_KEY ??= "test";
    const error = await loadModel("cohere:command-r").catch((thrown: unknown) => thrown);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("needs the package @langchain/cohere");
    expect((error as Error).message).toContain("npm install @langchain/cohere");
  });

  it("a missing provider key is refused at build time, naming the variable", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    await expect(loadModel("anthropic:claude-sonnet-4-5")).rejects.toThrow(
      /needs ANTHROPIC_API_KEY, which is not set/,
    );
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    expect(await loadModel("anthropic:claude-sonnet-4-5")).toBeInstanceOf(ChatAnthropic);
  });
});
