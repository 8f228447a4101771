import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { MaxIterationsError } from "../errors/max-iterations-error.ts";
import { ToolCallingUnsupportedError } from "../errors/tool-calling-unsupported-error.ts";
import { ScriptedChatModel, type ScriptedReply } from "../testing/index.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { AgentEvent, AgentResult, ApprovalHook } from "../types.ts";
import { createToolsRunner } from "./runner.ts";

type Reply = ScriptedReply;

class NoToolCallingModel extends BaseChatModel {
  _llmType() {
    return "plain-completion";
  }
  async _generate(): Promise<ChatResult> {
    throw new Error("not called");
  }
}

/** A ToolSpec that validates its input with zod, like the adapters do. */
function zodTool<Schema extends z.ZodObject>(
  name: string,
  schema: Schema,
  run: (args: z.infer<Schema>) => unknown,
): ToolSpec & { invocations: unknown[] } {
  const invocations: unknown[] = [];
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema: z.toJSONSchema(schema) as ToolSpec["inputSchema"],
    origin: "tool",
    invocations,
    async invoke(args) {
      const parsed = schema.parse(args);
      invocations.push(parsed);
      return run(parsed);
    },
  };
}

const question = [new HumanMessage("What is 2 + 3?")];

async function drain(
  stream: AsyncGenerator<AgentEvent, AgentResult>,
): Promise<{ events: AgentEvent[]; result: AgentResult }> {
  const events: AgentEvent[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return { events, result: next.value };
    events.push(next.value);
  }
}

const add = () => zodTool("add", z.object({ a: z.number(), b: z.number() }), ({ a, b }) => ({ sum: a + b }));

describe("createToolsRunner", () => {
  afterEach(() => vi.restoreAllMocks());

  it("describes the tools to the model from their JSON schemas", async () => {
    const model = new ScriptedChatModel(["No tools needed."]);
    await drain(createToolsRunner({ model, tools: [add()] }).stream(question, "r"));
    expect(model.calls[0]?.tools).toEqual([
      {
        type: "function",
        function: {
          name: "add",
          description: "The add tool.",
          parameters: expect.objectContaining({
            type: "object",
            properties: { a: { type: "number" }, b: { type: "number" } },
            required: ["a", "b"],
          }),
        },
      },
    ]);
  });

  it("runs a call, hands the result back as a tool message and ends with the text answer", async () => {
    const tool = add();
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 2, b: 3 }, id: "c1" }] },
      "It is 5.",
    ]);
    const runner = createToolsRunner({ model, tools: [tool] });

    const { events, result } = await drain(runner.stream(question, "run-1"));

    expect(tool.invocations).toEqual([{ a: 2, b: 3 }]);
    const toolMessage = model.calls[1]?.messages.at(-1);
    expect(toolMessage).toBeInstanceOf(ToolMessage);
    expect(toolMessage?.content).toBe('{"sum":5}');
    expect((toolMessage as ToolMessage).tool_call_id).toBe("c1");
    // A model call is framed by its own events, so a stream says something while the model thinks.
    expect(events.map((event) => event.type)).toEqual([
      "model-start",
      "model-end",
      "tool-call",
      "tool-result",
      "model-start",
      "model-end",
      "answer",
    ]);
    expect(events[0]).toEqual({ type: "model-start", runId: "run-1", model: expect.any(String) });
    expect(events[1]).toMatchObject({ type: "model-end", runId: "run-1", ok: true });
    expect(events[3]).toMatchObject({
      type: "tool-result",
      id: "c1",
      tool: "add",
      status: "ok",
      result: { sum: 5 },
    });
    expect(result).toMatchObject({
      runId: "run-1",
      pattern: "tools",
      status: "answered",
      answer: "It is 5.",
    });
    expect(result.messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(result.messages.at(-1)).toBeInstanceOf(AIMessage);
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        id: "c1",
        tool: "add",
        args: { a: 2, b: 3 },
        result: { sum: 5 },
        status: "ok",
      }),
    ]);
    expect(events.at(-1)).toEqual({ type: "answer", runId: "run-1", result });
  });

  it("sends bad tool input back to the model as the error text, and the loop goes on", async () => {
    const tool = add();
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: "two", b: 3 } }] },
      { toolCalls: [{ name: "add", args: { a: 2, b: 3 } }] },
      "5",
    ]);
    const { result } = await drain(createToolsRunner({ model, tools: [tool] }).stream(question, "run-2"));

    const errorMessage = model.calls[1]?.messages.at(-1) as ToolMessage;
    expect(errorMessage.content).toMatch(/^Error: /);
    expect(errorMessage.content).toContain("expected number");
    expect(errorMessage.status).toBe("error");
    expect(result.toolCalls.map((call) => call.status)).toEqual(["invalid", "ok"]);
    expect(tool.invocations).toEqual([{ a: 2, b: 3 }]);
    expect(result.answer).toBe("5");
  });

  it("answers an unknown tool name and a throwing tool with text, not a crash", async () => {
    const failing = zodTool("explode", z.object({}), () => {
      throw new Error("the database is down");
    });
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "multiply", args: {} }] },
      { toolCalls: [{ name: "explode", args: {} }] },
      "Sorry.",
    ]);
    const { result } = await drain(
      createToolsRunner({ model, tools: [add(), failing] }).stream(question, "r"),
    );

    expect(model.calls[1]?.messages.at(-1)?.content).toBe(
      "Error: Unknown tool 'multiply'. Available tools: add, explode.",
    );
    expect(model.calls[2]?.messages.at(-1)?.content).toBe("Error: the database is down");
    expect(result.toolCalls.map((call) => call.status)).toEqual(["unknown-tool", "error"]);
  });

  it("answers every call of a reply with parallel calls, in order", async () => {
    const model = new ScriptedChatModel([
      {
        toolCalls: [
          { name: "add", args: { a: 1, b: 1 }, id: "x" },
          { name: "add", args: { a: 2, b: 2 }, id: "y" },
        ],
      },
      "done",
    ]);
    await drain(createToolsRunner({ model, tools: [add()] }).stream(question, "r"));
    const tail = model.calls[1]?.messages.slice(-2) as ToolMessage[];
    expect(tail.map((message) => [message.tool_call_id, message.content])).toEqual([
      ["x", '{"sum":2}'],
      ["y", '{"sum":4}'],
    ]);
  });

  it("gives unparsable arguments back to the model as invalid input", async () => {
    const seen: BaseMessage[][] = [];
    const model = new ScriptedChatModel([]);
    model._generate = async (messages: BaseMessage[]): Promise<ChatResult> => {
      seen.push(messages);
      const message =
        seen.length === 1
          ? new AIMessage({
              content: "",
              invalid_tool_calls: [
                {
                  id: "bad",
                  name: "add",
                  args: "{a: 2",
                  error: "Unexpected token",
                  type: "invalid_tool_call",
                },
              ],
            })
          : new AIMessage("ok");
      return { generations: [{ message, text: message.text }] };
    };
    const { result } = await drain(createToolsRunner({ model, tools: [add()] }).stream(question, "r"));
    const second = seen[1] ?? [];
    expect(second.at(-1)?.content).toContain("Invalid input for tool 'add': Unexpected token");
    expect((second.at(-2) as AIMessage).tool_calls?.map((call) => call.id)).toEqual(["bad"]);
    expect(result.toolCalls[0]?.status).toBe("invalid");
  });

  it("ends with MaxIterationsError when the model keeps calling tools, without running the last calls", async () => {
    const tool = add();
    const forever = Array.from({ length: 40 }, () => ({
      toolCalls: [{ name: "add", args: { a: 1, b: 1 } }],
    }));
    const model = new ScriptedChatModel(forever);
    const runner = createToolsRunner({ model, tools: [tool] });

    const error = await drain(runner.stream(question, "r")).catch((thrown: unknown) => thrown);

    expect(MaxIterationsError.isInstance(error)).toBe(true);
    expect((error as MaxIterationsError).code).toBe("max-iterations");
    expect((error as Error).message).toContain("after 25 model turns (maxIterations)");
    expect(model.calls).toHaveLength(25);
    expect(tool.invocations).toHaveLength(24);
    expect((error as MaxIterationsError).toolCalls).toHaveLength(24);
  });

  it("honours a smaller maxIterations", async () => {
    const forever = Array.from({ length: 5 }, () => ({ toolCalls: [{ name: "add", args: { a: 1, b: 1 } }] }));
    const model = new ScriptedChatModel(forever);
    const runner = createToolsRunner({ model, tools: [add()], maxIterations: 2 });
    await expect(drain(runner.stream(question, "r"))).rejects.toThrow(/after 2 model turns/);
    expect(model.calls).toHaveLength(2);
  });

  describe("approval", () => {
    it("gates each call: a denial reaches the model with its reason and the tool never runs", async () => {
      const tool = add();
      const seen: unknown[] = [];
      const model = new ScriptedChatModel([
        { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] },
        { toolCalls: [{ name: "add", args: { a: 3, b: 4 } }] },
        "ok",
      ]);
      const runner = createToolsRunner({
        model,
        tools: [tool],
        approval: (call) => {
          seen.push(call);
          return call.args.a === 1 ? { approved: false, reason: "no adding ones" } : true;
        },
      });
      const { result, events } = await drain(runner.stream(question, "run-a"));

      expect(seen).toEqual([
        { tool: "add", args: { a: 1, b: 2 }, runId: "run-a", signal: expect.any(AbortSignal) },
        { tool: "add", args: { a: 3, b: 4 }, runId: "run-a", signal: expect.any(AbortSignal) },
      ]);
      expect(model.calls[1]?.messages.at(-1)?.content).toBe("Tool call denied: no adding ones");
      expect(tool.invocations).toEqual([{ a: 3, b: 4 }]);
      expect(result.toolCalls.map((call) => call.status)).toEqual(["denied", "ok"]);
      expect(events.find((event) => event.type === "tool-result")).toMatchObject({
        type: "tool-result",
        status: "denied",
        error: "Tool call denied: no adding ones",
      });
    });

    it("denies when the hook returns false, nothing, or throws (fails closed)", async () => {
      const tool = add();
      const model = new ScriptedChatModel([
        { toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] },
        { toolCalls: [{ name: "add", args: { a: 3, b: 4 } }] },
        { toolCalls: [{ name: "add", args: { a: 5, b: 6 } }] },
        "ok",
      ]);
      const decisions: Array<() => unknown> = [
        () => false,
        () => undefined, // a JavaScript hook that forgot to return
        () => {
          throw new Error("approver offline");
        },
      ];
      const approval = (async () => decisions.shift()?.()) as ApprovalHook;
      await drain(createToolsRunner({ model, tools: [tool], approval }).stream(question, "r"));
      expect(model.calls.slice(1).map((call) => call.messages.at(-1)?.content)).toEqual([
        "Tool call denied: the call to add was not approved",
        "Tool call denied: the call to add was not approved",
        "Tool call denied: the approval hook failed, so the call to add was not made: approver offline",
      ]);
      expect(tool.invocations).toEqual([]);
    });
  });

  describe("traceTools", () => {
    const rows = Array.from({ length: 500 }, (_, index) => ({ order_id: `O-${index + 1}`, region: "EMEA" }));
    const loadOrders = () => zodTool("load_orders", z.object({}), () => rows);
    const script = (): Reply[] => [{ toolCalls: [{ name: "load_orders", args: {} }] }, "Done."];

    it("prints each call and a shortened result through the logger", async () => {
      const lines: string[] = [];
      const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line).msg) });
      const runner = createToolsRunner({
        model: new ScriptedChatModel(script()),
        tools: [loadOrders()],
        traceTools: true,
        logger,
      });
      await drain(runner.stream(question, "r"));

      const full = JSON.stringify(rows);
      expect(lines).toEqual([
        "-> Invoking tool: load_orders with {}",
        `<- Tool result from load_orders: ${full.slice(0, 200)}…`,
      ]);
    });

    it("prints to stderr without a logger, and nothing when off", async () => {
      const written: string[] = [];
      vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
        written.push(String(chunk));
        return true;
      });
      await drain(
        createToolsRunner({
          model: new ScriptedChatModel(script()),
          tools: [loadOrders()],
          traceTools: true,
        }).stream(question, "r"),
      );
      await drain(
        createToolsRunner({ model: new ScriptedChatModel(script()), tools: [loadOrders()] }).stream(
          question,
          "r",
        ),
      );
      expect(written).toHaveLength(2);
      expect(written[0]).toBe("-> Invoking tool: load_orders with {}\n");
      expect(written[1]).toMatch(
        /^<- Tool result from load_orders: \[\{"order_id":"O-1","region":"EMEA"\}.{150,}…\n$/,
      );
    });
  });

  it("refuses a model without native tool calling, naming the fix", () => {
    const refuse = () => createToolsRunner({ model: new NoToolCallingModel({}), tools: [add()] });
    expect(refuse).toThrow(ToolCallingUnsupportedError);
    expect(refuse).toThrow(/'plain-completion' has no native tool calling .*pattern: "code-action"/);
  });

  it("puts the instructions before the conversation for the model only", async () => {
    const model = new ScriptedChatModel(["Hi."]);
    const runner = createToolsRunner({ model, tools: [], instructions: "Be brief." });
    const { result } = await drain(runner.stream(question, "r"));
    expect(model.calls[0]?.messages[0]).toBeInstanceOf(SystemMessage);
    expect(model.calls[0]?.messages[0]?.content).toBe("Be brief.");
    expect(result.messages.map((message) => message.type)).toEqual(["human", "ai"]);
  });

  it("gives tools with names providers refuse a safe name, and keeps the tool's own name in records", async () => {
    const tool = zodTool("files.read", z.object({ path: z.string() }), ({ path }) => `read ${path}`);
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "files_read", args: { path: "a" } }] }, "ok"]);
    const { result } = await drain(createToolsRunner({ model, tools: [tool] }).stream(question, "r"));
    expect(model.calls[0]?.tools).toEqual([
      expect.objectContaining({ function: expect.objectContaining({ name: "files_read" }) }),
    ]);
    expect(result.toolCalls[0]).toMatchObject({ tool: "files.read", status: "ok", result: "read a" });
  });
});
