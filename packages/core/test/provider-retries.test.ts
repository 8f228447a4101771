import { HumanMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadModel } from "../src/model/model.ts";
import { type OpenAIFixture, startOpenAIFixture } from "../src/testing/index.ts";
import { settled } from "./fake-clock.ts";

// docs/langchain.md: "Nothing is retried for you". A model built from a provider string asks once;
// withRetry() is the one retry. The local server counts the requests that reached it.
let server: OpenAIFixture | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("models built from provider strings do not retry on their own", () => {
  it('"openai:<model>" against HTTP 500: one request, and withRetry({ stopAfterAttempt: 2 }) makes it two', async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const environment = { OPENAI_API_KEY: "fixture-key", OPENAI_BASE_URL: server.baseURL };
    const model = await loadModel("openai:gpt-5-mini", environment);
    await expect(model.invoke([new HumanMessage("hi")])).rejects.toMatchObject({ status: 500 });
    expect(server.requests.length).toBe(1);
    // withRetry's wait before its retry runs on the fake clock (fake-clock.ts).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      await expect(
        settled(model.withRetry({ stopAfterAttempt: 2 }).invoke([new HumanMessage("hi")])),
      ).rejects.toMatchObject({ status: 500 });
    } finally {
      vi.useRealTimers();
    }
    expect(server.requests.length).toBe(3);
  });

  it('"anthropic:<model>" against HTTP 500: one request', async () => {
    server = await startOpenAIFixture({ replies: [], failures: { status: 500 } });
    const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
    process.env.ANTHROPIC_API_KEY = "fixture-key";
    process.env.ANTHROPIC_BASE_URL = server.baseURL.replace(/\/v1$/, "");
    try {
      const model = await loadModel("anthropic:claude-sonnet-4-5");
      await expect(model.invoke([new HumanMessage("hi")])).rejects.toMatchObject({ status: 500 });
      expect(server.requests.length).toBe(1);
    } finally {
      for (const [name, value] of [
        ["ANTHROPIC_API_KEY", saved.key],
        ["ANTHROPIC_BASE_URL", saved.url],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
