import { HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";

const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
  name: "add",
  description: "Add two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});

describe("what an agent takes and records", () => {
  it("invoke takes one LangChain message, as a chat model does", async () => {
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "add", args: { a: 2, b: 3 } }] }, "5"]);
    await using agent = await buildAgent({ model, extraTools: [add] });
    // Type-checked by `tsc -b` too: a single BaseMessage is an AgentInputLike.
    const result = await agent.invoke(new HumanMessage("What is 2 + 3?"));
    expect(result.answer).toBe("5");
    expect(model.calls[0]?.messages.at(-1)?.content).toBe("What is 2 + 3?");
  });

  it("a tool call's durationMs is rounded to 0.01 ms", async () => {
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 1, b: 1 } }] },
      { toolCalls: [{ name: "add", args: { a: 2, b: 2 } }] },
      "done",
    ]);
    await using agent = await buildAgent({ model, extraTools: [add] });
    const result = await agent.invoke("Add twice.");
    expect(result.toolCalls).toHaveLength(2);
    for (const call of result.toolCalls) {
      expect(Number.isInteger(Math.round(call.durationMs * 100))).toBe(true);
      expect(call.durationMs).toBe(Number(call.durationMs.toFixed(2)));
    }
  });

  it("an image part is refused with the options that carry files: codeAction.dataFiles and outputFiles", async () => {
    const model = new ScriptedChatModel(["unused"]);
    await using agent = await buildAgent({ model, extraTools: [add] });
    const image = { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } };
    const error = await agent
      .invoke({ messages: [{ role: "user", content: [image] as never }] })
      .catch((thrown: unknown) => thrown as Error);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toContain("codeAction.dataFiles");
    expect((error as Error).message).toContain("codeAction.outputFiles");
    expect((error as Error).message).not.toContain("mount");
  });
});
