import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AbortError, buildAgent, CodeActionError, ConfigError, ModelCallError } from "../src/index.ts";
import { toMessages } from "../src/input-messages.ts";
import {
  ScriptedChatModel,
  ScriptedRepliesExhaustedError,
  startOpenAIFixture,
} from "../src/testing/index.ts";
import { settled } from "./fake-clock.ts";
import { RunRecorder } from "./run-recorder.ts";

const add = () =>
  tool(async ({ a, b }: { a: number; b: number }) => a + b, {
    name: "add",
    description: "Add two numbers.",
    schema: z.object({ a: z.number(), b: z.number() }),
  });

/** A tool that waits until its signal aborts, and says whether it is still running. */
function waitingTool() {
  const state = { started: 0, running: 0, sawAbort: false };
  const started: { resolve: () => void } = { resolve: () => undefined };
  const firstStart = new Promise<void>((resolve) => {
    started.resolve = resolve;
  });
  const waiter = tool(
    async (_input: Record<string, never>, config) => {
      state.started += 1;
      state.running += 1;
      started.resolve();
      try {
        await new Promise<void>((_, reject) => {
          const signal = config?.signal;
          if (!signal) return;
          signal.addEventListener("abort", () => reject(new Error("tool cancelled")), { once: true });
        });
      } finally {
        state.sawAbort = config?.signal?.aborted === true;
        state.running -= 1;
      }
      return "never";
    },
    { name: "wait_forever", description: "Waits.", schema: z.object({}) },
  );
  return { tool: waiter, state, firstStart };
}

describe("the agent as a LangChain Runnable (tools pattern, scripted model)", () => {
  it("is one chain run with runName, tags and metadata; model calls and tool calls are its children", async () => {
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "add", args: { a: 2, b: 3 } }] }, "5"]);
    await using agent = await buildAgent({ model, extraTools: [add()] });
    const recorder = new RunRecorder();
    const result = await agent.invoke("What is 2 + 3?", {
      callbacks: [recorder],
      tags: ["checkout"],
      metadata: { user: "u-1" },
      runName: "math-agent",
    });
    expect(result.answer).toBe("5");
    const root = recorder.root();
    expect(root).toMatchObject({ kind: "chain", name: "math-agent", ended: true });
    expect(root.tags).toContain("checkout");
    expect(root.metadata).toMatchObject({ user: "u-1", codeactionRunId: result.runId });
    expect(root.output).toMatchObject({ answer: "5", runId: result.runId });
    const children = recorder.children(root);
    expect(children.map((run) => run.kind)).toEqual(["llm", "tool", "llm"]);
    const toolRun = children[1];
    expect(toolRun).toMatchObject({ name: "add", ended: true, output: expect.anything() });
    expect(String(toolRun?.input)).toContain('"a":2');
    // Tags and metadata reach every child run.
    for (const child of children) {
      expect(child.tags).toContain("checkout");
      expect(child.metadata).toMatchObject({ user: "u-1" });
    }
  });

  it("reports a refused call as a failed tool run and the error of a failing turn on the chain run", async () => {
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "add", args: { a: 1, b: 1 } }] }, "no"]);
    await using agent = await buildAgent({ model, extraTools: [add()], approval: () => false });
    const recorder = new RunRecorder();
    await agent.invoke("1 + 1?", { callbacks: [recorder] });
    const [, toolRun] = recorder.children(recorder.root());
    expect(toolRun).toMatchObject({ kind: "tool", name: "add", ended: true });
    expect(toolRun?.error).toContain("not approved");

    const failing = await buildAgent({ model: new ScriptedChatModel([]) });
    const failed = new RunRecorder();
    await expect(failing.invoke("hi", { callbacks: [failed] })).rejects.toThrow(/no reply left|replies/i);
    expect(failed.root().error).toBeDefined();
  });

  it("takes every message-like LangChain takes, and refuses non-text parts with the fix", () => {
    const messages = toMessages({
      messages: [
        ["system", "Be brief."],
        { role: "human", content: "Hi" },
        ["ai", "Hello."],
        {
          role: "user",
          content: [
            { type: "text", text: "Sum " },
            { type: "text", text: "it." },
          ],
        },
        new HumanMessage("And now?"),
      ],
    });
    expect(messages.map((message) => message.getType())).toEqual(["system", "human", "ai", "human", "human"]);
    expect(toMessages("just a string")[0]?.getType()).toBe("human");
    expect(toMessages([["user", "tuple list"]])[0]?.content).toBe("tuple list");
    expect(() =>
      toMessages({ messages: [{ role: "user", content: [{ type: "image_url", image_url: "x" }] as never }] }),
    ).toThrow(/messages\[0\]\.content\[0\] is a "image_url" part; the agent reads text only/);
    expect(() => toMessages({ messages: [{ role: "tool", content: "x" } as never] })).toThrow(
      /role "tool"; use "user" \(or "human"\)/,
    );
  });

  it("cancels during the model call: rejects with an AbortError carrying the run id", async () => {
    const model = new ScriptedChatModel(["never used"]);
    const slow = RunnableLambda.from(
      (_input: unknown, config?: { signal?: AbortSignal }) =>
        new Promise<AIMessage>((_, reject) =>
          config?.signal?.addEventListener("abort", () => reject(config.signal?.reason), { once: true }),
        ),
    );
    await using agent = await buildAgent({ model: slow.withFallbacks([model]) as never });
    const controller = new AbortController();
    const turn = agent.invoke("hi", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("client went away")), 50);
    const error = await turn.catch((thrown: unknown) => thrown);
    expect(AbortError.isInstance(error)).toBe(true);
    expect((error as AbortError).name).toBe("AbortError");
    expect((error as AbortError).runId).toMatch(/^run_/);
    expect((error as AbortError).message).toContain("client went away");
  });

  it("an AbortError carries the tool calls made before the abort, the interrupted one marked cancelled", async () => {
    const waiting = waitingTool();
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 2, b: 3 } }] },
      { toolCalls: [{ name: "wait_forever", args: {} }] },
    ]);
    await using agent = await buildAgent({ model, extraTools: [add(), waiting.tool] });
    const controller = new AbortController();
    const turn = agent.invoke("add, then wait", { signal: controller.signal });
    await waiting.firstStart;
    controller.abort(new Error("client went away"));
    const error = (await turn.catch((thrown: unknown) => thrown)) as AbortError;
    expect(AbortError.isInstance(error)).toBe(true);
    expect(error.toolCalls.map((call) => [call.tool, call.status])).toEqual([
      ["add", "ok"],
      ["wait_forever", "cancelled"],
    ]);
    expect(error.attempts).toEqual([]);
    expect(error.message).toContain("after 2 tool call(s)");
  });

  it("cancels a running tool call: the tool gets the signal and has stopped when invoke rejects; the next turn works", async () => {
    const waiting = waitingTool();
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "wait_forever", args: {} }] }, "second turn"]);
    await using agent = await buildAgent({ model, extraTools: [waiting.tool] });
    const controller = new AbortController();
    const turn = agent.invoke("wait", { signal: controller.signal });
    await waiting.firstStart;
    controller.abort();
    await expect(turn).rejects.toSatisfy(AbortError.isInstance);
    expect(waiting.state).toMatchObject({ started: 1, running: 0, sawAbort: true });
    expect((await agent.invoke("again")).answer).toBe("second turn");
  });

  it("cancels an approval wait: the hook receives the signal", async () => {
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "add", args: { a: 1, b: 2 } }] }]);
    let hookSignal: AbortSignal | undefined;
    const asked: { resolve: () => void; promise: Promise<void> } = {
      resolve: () => undefined,
      promise: Promise.resolve(),
    };
    asked.promise = new Promise<void>((resolve) => {
      asked.resolve = resolve;
    });
    await using agent = await buildAgent({
      model,
      extraTools: [add()],
      approval: ({ signal }) => {
        hookSignal = signal;
        asked.resolve();
        return new Promise<boolean>(() => undefined);
      },
    });
    const controller = new AbortController();
    const turn = agent.invoke("1 + 2?", { signal: controller.signal });
    await asked.promise;
    controller.abort();
    await expect(turn).rejects.toSatisfy(AbortError.isInstance);
    expect(hookSignal?.aborted).toBe(true);
  });

  it("leaving stream() early cancels the turn; stream yields the steps, the last one the answer", async () => {
    const waiting = waitingTool();
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "wait_forever", args: {} }] }, "unused"]);
    await using agent = await buildAgent({ model, extraTools: [waiting.tool] });
    const recorder = new RunRecorder();
    for await (const event of await agent.stream("wait", { callbacks: [recorder] })) {
      if (event.type === "model-start" || event.type === "model-end") continue;
      expect(event.type).toBe("tool-call");
      break;
    }
    // The stream pulls nothing ahead: the requested tool never ran, the model was not asked again.
    expect(waiting.state).toMatchObject({ started: 0, running: 0 });
    expect(model.calls).toHaveLength(1);
    expect(recorder.root().error).toMatch(/AbortError/);

    const answering = await buildAgent({ model: new ScriptedChatModel(["done"]) });
    const events = [];
    for await (const event of await answering.stream([["user", "go"]])) events.push(event.type);
    expect(events).toEqual(["model-start", "model-end", "answer"]);
  });

  it("works with batch, withConfig, pipe, and models wrapped in withRetry and withFallbacks", async () => {
    const flaky = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 1, b: 1 } }] },
      "2",
      "4",
      "5",
      "6",
    ]);
    // A model with no replies throws on every call: the fallback answers.
    const failing = new ScriptedChatModel([]);
    await using agent = await buildAgent({
      model: failing
        .withRetry({ stopAfterAttempt: 2 })
        .withFallbacks([flaky.withConfig({ tags: ["fallback"] })]),
      extraTools: [add()],
    });
    // withRetry's wait before its retry runs on the fake clock (fake-clock.ts).
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      // The tools reached the fallback's model: it was asked with the add tool bound.
      expect((await settled(agent.invoke("1 + 1?"))).answer).toBe("2");
      expect(flaky.calls[0]?.tools).toHaveLength(1);
      const piped = agent.withConfig({ runName: "inner" }).pipe((result) => result.answer.toUpperCase());
      expect(await settled(piped.invoke("2 + 2?"))).toBe("4");
      // One input after the other: each gets the next reply, in order.
      const answers = await settled(agent.batch(["2 + 3?", "3 + 3?"], { maxConcurrency: 1 }));
      expect(answers.map((result) => result.answer)).toEqual(["5", "6"]);
      // The replies are used up: the model's own error comes back in its place, not thrown.
      const [exhausted] = await settled(agent.batch(["x"], {}, { returnExceptions: true }));
      expect(ScriptedRepliesExhaustedError.isInstance(exhausted), String(exhausted)).toBe(true);
      // The failing model was tried twice for each of its six calls: the retries did happen.
      expect(failing.calls).toHaveLength(12);
    } finally {
      vi.useRealTimers();
    }
  });

  it("close(), shutdown() (its deprecated old name) and `await using` end the agent: a later turn is refused", async () => {
    for (const end of [
      (agent: { close(): Promise<void> }) => agent.close(),
      (agent: { shutdown(): Promise<void> }) => agent.shutdown(),
      (agent: AsyncDisposable) => agent[Symbol.asyncDispose](),
    ]) {
      const agent = await buildAgent({ model: new ScriptedChatModel(["never asked"]) });
      await end(agent);
      await end(agent); // idempotent
      const refusal = await agent.invoke("hello").catch((error: unknown) => error);
      expect(ConfigError.isInstance(refusal)).toBe(true);
      expect((refusal as Error).message).toMatch(/this agent was shut down; build a new one/);
    }
  });

  it("is a tool for another agent: the outer run's callbacks and signal reach the inner agent", async () => {
    const inner = await buildAgent({ model: new ScriptedChatModel(["42"]) });
    const asTool = inner.asTool({ name: "analyst", description: "Answers data questions." });
    const outerModel = new ScriptedChatModel([
      { toolCalls: [{ name: "analyst", args: { question: "the answer?" } }] },
      "The analyst says 42.",
    ]);
    await using outer = await buildAgent({ model: outerModel, extraTools: [asTool] });
    const recorder = new RunRecorder();
    const result = await outer.invoke("ask the analyst", { callbacks: [recorder] });
    expect(result.toolCalls[0]).toMatchObject({ tool: "analyst", status: "ok", result: "42" });
    const toolRun = recorder.children(recorder.root()).find((run) => run.kind === "tool");
    expect(toolRun?.name).toBe("analyst");
    const innerRun = recorder.children(toolRun).find((run) => run.kind === "chain");
    expect(innerRun).toMatchObject({ name: "CodeActionAgent", ended: true, output: { answer: "42" } });
    await inner.close();
  });

  it("a failing model call is one ModelCallError with the run id and the provider's message; usage is summed", async () => {
    const fixture = await startOpenAIFixture({ replies: [] });
    try {
      const model = new ChatOpenAI({
        model: "gpt-test",
        apiKey: "sk-test",
        configuration: { baseURL: fixture.baseURL },
      });
      await using agent = await buildAgent({ model });
      const error = await agent.invoke("hi").catch((thrown: unknown) => thrown);
      expect(ModelCallError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ status: 400, runId: expect.stringMatching(/^run_/), attempts: [] });
      expect((error as Error).message).toContain("the fixture has no reply left");
    } finally {
      await fixture.close();
    }
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 1, b: 1 } }], usage: { inputTokens: 10, outputTokens: 4 } },
      { content: "2", usage: { inputTokens: 20, outputTokens: 1 } },
    ]);
    await using agent = await buildAgent({ model, extraTools: [add()] });
    const result = await agent.invoke("1 + 1?");
    expect(result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 5,
      totalTokens: 35,
      modelCalls: 2,
      toolCalls: 1,
      attempts: 0,
      sandboxSeconds: 0,
    });
    expect(Number.isInteger(result.timings.totalMs)).toBe(true);
  });

  it("refuses options that do nothing for code-action", async () => {
    for (const option of [{ traceTools: true }, { maxIterations: 3 }]) {
      const error = await buildAgent({
        model: new ScriptedChatModel([]),
        pattern: "code-action",
        ...option,
      }).catch((thrown: unknown) => thrown);
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/only apply to pattern "tools", but pattern is "code-action"/);
    }
  });
});

describe("responseFormat in the tools pattern (scripted model)", () => {
  const invoice = z.object({ total: z.number(), currency: z.enum(["EUR", "USD"]) });

  it("tells the model the shape, sends a wrong answer back naming the path, and returns the typed value", async () => {
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "add", args: { a: 2, b: 3 } }] },
      '{"total": "5", "currency": "EUR"}',
      '```json\n{"total": 5, "currency": "EUR"}\n```',
    ]);
    await using agent = await buildAgent({ model, extraTools: [add()], responseFormat: invoice });
    const result = await agent.invoke("Total of 2 and 3, in euros?");
    // Typed from the schema: this line does not compile if structured is unknown.
    const total: number = result.structured.total;
    expect(total).toBe(5);
    expect(result.structured).toEqual({ total: 5, currency: "EUR" });
    expect(String(model.calls[0]?.messages[0]?.content)).toContain(
      '"currency":{"type":"string","enum":["EUR","USD"]}',
    );
    const repair = String(model.calls[2]?.messages.at(-1)?.content);
    expect(repair).toContain("total: Invalid input: expected number, received string");
    expect(model.calls).toHaveLength(3);
  });

  it("takes a JSON Schema too, and ends with MaxIterationsError when no answer fits", async () => {
    const model = new ScriptedChatModel(['{"total": 1}', '{"total": 1}']);
    await using agent = await buildAgent({
      model,
      maxIterations: 2,
      responseFormat: {
        type: "object",
        properties: { total: { type: "number" } },
        required: ["total", "currency"],
      },
    });
    const error = await agent.invoke("Total?").catch((thrown: unknown) => thrown);
    expect(CodeActionError.isInstance(error) && error.code).toBe("max-iterations");
    expect(String(model.calls[1]?.messages.at(-1)?.content)).toContain(
      '(the whole answer): Instance does not have required property "currency"',
    );
  });

  it("without responseFormat, structured is the answer's JSON value when it is JSON", async () => {
    const model = new ScriptedChatModel(['{"regions": ["EU"]}', "About five."]);
    await using agent = await buildAgent({ model });
    expect((await agent.invoke("Regions?")).structured).toEqual({ regions: ["EU"] });
    expect((await agent.invoke("How many?")).structured).toBeUndefined();
  });

  it("refuses a responseFormat that is not a schema, naming the fix", async () => {
    const model = new ScriptedChatModel([]);
    await expect(buildAgent({ model, responseFormat: "json" as never })).rejects.toThrow(
      /responseFormat must be a zod schema or a JSON Schema object/,
    );
  });
});
