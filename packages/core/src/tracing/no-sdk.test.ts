import { tool } from "@langchain/core/tools";
import { ProxyTracer, ProxyTracerProvider, trace } from "@opentelemetry/api";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { buildAgent } from "../build-agent.ts";
import { ScriptedChatModel } from "../testing/index.ts";

// With @opentelemetry/api installed but no SDK registered, a run asks the API for no tracer and
// starts no span: not even the API's non-recording ones (counted through the API's own classes).

afterEach(() => vi.restoreAllMocks());

describe("tracing with no SDK registered", () => {
  it("creates no span object and asks for no tracer", async () => {
    const getTracer = vi.spyOn(ProxyTracerProvider.prototype, "getTracer");
    const startSpan = vi.spyOn(ProxyTracer.prototype, "startSpan");
    const startActiveSpan = vi.spyOn(ProxyTracer.prototype, "startActiveSpan");
    const globalGetTracer = vi.spyOn(trace, "getTracer");
    const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
      name: "add",
      description: "Add.",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "add", args: { a: 1, b: 1 } }] }, "2"]);
    await using agent = await buildAgent({ model, extraTools: [add] });
    expect((await agent.invoke("1 + 1?")).answer).toBe("2");
    expect({
      getTracer: getTracer.mock.calls.length + globalGetTracer.mock.calls.length,
      startSpan: startSpan.mock.calls.length + startActiveSpan.mock.calls.length,
    }).toEqual({ getTracer: 0, startSpan: 0 });
  });
});
