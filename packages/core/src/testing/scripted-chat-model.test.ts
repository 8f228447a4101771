import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedRepliesExhaustedError } from "../errors/scripted-replies-exhausted-error.ts";
import { ScriptedChatModel } from "./scripted-chat-model.ts";

describe("ScriptedChatModel", () => {
  it("plays its replies in order and records the calls", async () => {
    const model = new ScriptedChatModel(["first", "second"]);
    const one = await model.invoke([new HumanMessage("a")]);
    const two = await model.invoke([new HumanMessage("b")]);
    expect([one.content, two.content]).toEqual(["first", "second"]);
    expect(model.calls.map((call) => call.messages.at(-1)?.content)).toEqual(["a", "b"]);
    expect(model.remaining).toBe(0);
  });

  it("throws a clear error when the queue is empty", async () => {
    const model = new ScriptedChatModel(["only"]);
    await model.invoke("x");
    const error = await model.invoke("What now?").catch((caught: unknown) => caught);
    expect(ScriptedRepliesExhaustedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("no reply left for call #2 (it was given 1)");
    expect((error as Error).message).toContain("What now?");
  });

  it("replies with tool calls and records the tools bound with bindTools", async () => {
    const lookup = tool(async () => "x", {
      name: "lookup",
      description: "Looks up.",
      schema: z.object({ key: z.string() }),
    });
    const model = new ScriptedChatModel([
      { content: "", toolCalls: [{ name: "lookup", args: { key: "a" } }] },
      "done",
    ]);
    const bound = model.bindTools([lookup]);
    const reply = (await bound.invoke([new HumanMessage("go")])) as AIMessage;
    expect(reply.tool_calls).toEqual([
      { name: "lookup", args: { key: "a" }, id: "call_1_1", type: "tool_call" },
    ]);
    expect(model.calls[0]?.tools).toHaveLength(1);
    expect((await model.invoke("again")).content).toBe("done");
  });

  it("reads a replay file", async () => {
    const folder = await mkdtemp(join(tmpdir(), "scripted-"));
    const path = join(folder, "replay.json");
    await writeFile(
      path,
      JSON.stringify({ replies: ["```python\nprint('RESULT: 1')\n```", { content: "hi" }] }),
    );
    const model = await ScriptedChatModel.fromReplayFile(path);
    expect((await model.invoke("q")).content).toContain("RESULT: 1");
    expect((await model.invoke("q")).content).toBe("hi");
    await writeFile(path, JSON.stringify(["not", "wrapped"]));
    await expect(ScriptedChatModel.fromReplayFile(path)).rejects.toThrow(/\{"replies": \[\.\.\.\]\}/);
  });
});
