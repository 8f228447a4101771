import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { buildAgent } from "../build-agent.ts";
import { ScriptedChatModel, startOpenAIFixture } from "../testing/index.ts";
import { defaultModelTimeoutSeconds, loadModel } from "./model.ts";

describe("loadModel", () => {
  it("passes a chat model through", async () => {
    const model = new ScriptedChatModel([]);
    expect(await loadModel(model)).toBe(model);
  });

  it('makes "openai:<model>" a ChatOpenAI with the key and OPENAI_BASE_URL', async () => {
    const model = (await loadModel("openai:gpt-5-mini", {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    })) as unknown as ChatOpenAI;
    expect(model).toBeInstanceOf(ChatOpenAI);
    expect(model.model).toBe("gpt-5-mini");
    expect(model.clientConfig.baseURL).toBe("http://127.0.0.1:9/v1");
  });

  it("refuses a missing key with the fix", async () => {
    await expect(loadModel("openai:gpt-5-mini", {})).rejects.toThrow(
      /needs OPENAI_API_KEY, which is not set\. Export it/,
    );
  });
});

describe("a model built from a provider string cannot hang", () => {
  it("has a 90 s timeout by default; modelTimeout's seconds otherwise", async () => {
    const env = { OPENAI_API_KEY: "fixture-key" };
    expect(defaultModelTimeoutSeconds).toBe(90);
    expect(((await loadModel("openai:gpt-x", env)) as ChatOpenAI).timeout).toBe(90_000);
    expect(((await loadModel("openai:gpt-x", env, { timeoutSeconds: 5 })) as ChatOpenAI).timeout).toBe(5000);
  });

  it("against a server that accepts and never answers, the call fails as a timeout, once", async () => {
    const server = await startOpenAIFixture({ replies: [], silent: {} });
    try {
      const env = { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: server.baseURL };
      const model = await loadModel("openai:gpt-x", env, { timeoutSeconds: 0.2 });
      await expect(model.invoke("Hello?")).rejects.toMatchObject({ name: "TimeoutError" });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("buildAgent's modelTimeout reaches the model it builds: invoke fails with the timeout as its cause", async () => {
    const server = await startOpenAIFixture({ replies: [], silent: {} });
    const previous = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "fixture-key";
    process.env.OPENAI_BASE_URL = server.baseURL;
    try {
      const agent = await buildAgent({ model: "openai:gpt-x", pattern: "tools", modelTimeout: 0.2 });
      const failure = await agent.invoke("Hello?").catch((error: unknown) => error as Error);
      expect(failure).toMatchObject({ code: "model-call", cause: { name: "TimeoutError" } });
      await agent.close();
    } finally {
      for (const [name, value] of [
        ["OPENAI_API_KEY", previous.key],
        ["OPENAI_BASE_URL", previous.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      await server.close();
    }
  });
});
