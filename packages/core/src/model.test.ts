import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { loadModel } from "./model.ts";
import { ScriptedChatModel } from "./testing/index.ts";

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
