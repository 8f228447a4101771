import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { countingSandbox, turnSettings } from "../../test/turn-fixtures.ts";
import { AttemptsExhaustedError } from "../errors/attempts-exhausted-error.ts";
import { ScriptedRepliesExhaustedError } from "../errors/scripted-replies-exhausted-error.ts";
import { ScriptedChatModel } from "../testing/scripted-chat-model.ts";
import type { AgentEvent, Attempt } from "../types.ts";
import { createCodeActionTurn } from "./turn.ts";

const settings = turnSettings;

describe("replies are checked before a container starts", () => {
  it("no program and two programs are attempts with repairs, and no container is started", async () => {
    const model = new ScriptedChatModel([
      "The revenue is 42.",
      "```python\nprint(1)\n```\nand\n```python\nprint('RESULT: 2')\n```",
      "```bash\nwc -l orders.csv\n```",
    ]);
    const sandbox = countingSandbox();
    const turn = createCodeActionTurn({ model, sandbox, tools: [], settings });
    const events: AgentEvent[] = [];
    const stream = turn.stream([new HumanMessage("Revenue?")], "run-1");
    const error = await (async () => {
      try {
        for await (const event of stream) events.push(event);
      } catch (thrown) {
        return thrown;
      }
    })();

    expect(sandbox.created).toBe(0);
    expect(AttemptsExhaustedError.isInstance(error)).toBe(true);
    const attempts = (error as AttemptsExhaustedError).attempts;
    expect(attempts.map((attempt) => attempt.status)).toEqual(["no-program", "no-program", "no-program"]);
    expect(attempts.map((attempt) => attempt.timings.containerStartMs)).toEqual([0, 0, 0]);
    expect(attempts[1]?.modelReply).toContain("print('RESULT: 2')");

    // The model saw one clear repair message per refused reply.
    const repairs = model.calls.slice(1).map((call) => String(call.messages.at(-1)?.content));
    expect(repairs[0]).toContain("your reply had no python block");
    expect(repairs[1]).toContain("Your reply had 2 python blocks, so nothing was run");
    expect(events.filter((event) => event.type === "repair-start")).toHaveLength(2);
    expect(events.filter((event) => event.type === "program-end").map((event) => event.status)).toEqual([
      "no-program",
      "no-program",
      "no-program",
    ]);
  });

  it("a reply with one program asks for a container", async () => {
    const model = new ScriptedChatModel(["```python\nprint('RESULT: 1')\n```"]);
    const sandbox = countingSandbox();
    const turn = createCodeActionTurn({ model, sandbox, tools: [], settings });
    await expect(async () => {
      for await (const _event of turn.stream([new HumanMessage("One?")], "run-2"));
    }).rejects.toThrow(/did not start/);
    expect(sandbox.created).toBe(1);
  });
});

describe("model events", () => {
  it("frame every model call, before its program starts, and say when a call failed", async () => {
    // Two replies without a program, then none: the third call throws.
    const model = new ScriptedChatModel(["The revenue is 42.", "Still 42."]);
    const turn = createCodeActionTurn({ model, sandbox: countingSandbox(), tools: [], settings });
    const events: AgentEvent[] = [];
    await (async () => {
      for await (const event of turn.stream([new HumanMessage("Revenue?")], "run-m")) events.push(event);
    })().catch(() => undefined);
    const kinds = events.map((event) => event.type).filter((type) => type !== "repair-start");
    expect(kinds).toEqual([
      "model-start",
      "model-end",
      "program-start",
      "program-end",
      "model-start",
      "model-end",
      "program-start",
      "program-end",
      "model-start",
      "model-end",
    ]);
    const ends = events.filter((event) => event.type === "model-end");
    expect(ends.map((event) => [event.attempt, event.ok])).toEqual([
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(events[0]).toEqual({ type: "model-start", runId: "run-m", attempt: 1, model: expect.any(String) });
  });
});

describe("a CodeActionError the model throws itself", () => {
  it("keeps its class and gets the run's id and the attempts so far", async () => {
    // One reply, then none: the second model call throws ScriptedRepliesExhaustedError.
    const model = new ScriptedChatModel(["The revenue is 42."]);
    const turn = createCodeActionTurn({ model, sandbox: countingSandbox(), tools: [], settings });
    const error = await (async () => {
      for await (const _event of turn.stream([new HumanMessage("Revenue?")], "run-3"));
    })().catch((thrown: unknown) => thrown);
    expect(ScriptedRepliesExhaustedError.isInstance(error), String(error)).toBe(true);
    const carried = error as ScriptedRepliesExhaustedError & { runId?: string; attempts?: Attempt[] };
    expect(carried.runId).toBe("run-3");
    expect(carried.attempts?.map((attempt) => attempt.status)).toEqual(["no-program"]);
  });
});
