import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { resolveModel } from "./model.ts";
import { ScriptedChatModel } from "./testing/index.ts";

describe("resolveModel", () => {
  it("passes a chat model through", () => {
    const model = new ScriptedChatModel([]);
    expect(resolveModel(model)).toBe(model);
  });

  it('makes "openai:<model>" a ChatOpenAI with the key and OPENAI_BASE_URL', () => {
    const model = resolveModel("openai:gpt-5-mini", {
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    }) as ChatOpenAI;
    expect(model).toBeInstanceOf(ChatOpenAI);
    expect(model.model).toBe("gpt-5-mini");
    expect(model.clientConfig.baseURL).toBe("http://127.0.0.1:9/v1");
  });

  it("refuses a missing key with the fix", () => {
    expect(() => resolveModel("openai:gpt-5-mini", {})).toThrow(
      /needs OPENAI_API_KEY, which is not set\. Export it/,
    );
  });
});
