import { fileURLToPath } from "node:url";
import { tool } from "@langchain/core/tools";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { conventionProblems } from "./genai-conventions.ts";
import { programReply } from "./helpers.ts";
import { childrenOf, recordSpansInMemory } from "./otel-setup.ts";

// The spans of a code-action turn, recorded by the official OpenTelemetry SDK: a repair, three
// bridged calls (one of them to @modelcontextprotocol/server-everything from npm, run over stdio).

const everything = fileURLToPath(
  new URL("../../cli/node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const exporter = recordSpansInMemory();

const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
  name: "add",
  description: "Add two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});
const broken = tool(
  async () => {
    throw new Error("the warehouse is offline");
  },
  { name: "broken", description: "Always fails.", schema: z.object({}) },
);

const firstProgram = 'from codeaction_tools import broken\nbroken()\nprint("RESULT: never")';
const secondProgram =
  'from codeaction_tools import add, echo\ntotal = add(a=2, b=3)\nprint(echo(message=f"sum {total}"))\nprint("RESULT:", total)';

async function tracedTurn(tracing?: { recordContent: boolean; maxContentChars: number }) {
  const model = new ScriptedChatModel([
    { content: programReply(firstProgram), usage: { inputTokens: 100, outputTokens: 20 } },
    { content: programReply(secondProgram), usage: { inputTokens: 140, outputTokens: 30 } },
  ]);
  await using agent = await buildAgent({
    model,
    pattern: "code-action",
    sandbox: { pool: 0 },
    extraTools: [add, broken],
    servers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
    ...(tracing ? { tracing } : {}),
  });
  const tracer = trace.getTracer("the caller");
  const result = await tracer.startActiveSpan("caller", async (span) => {
    try {
      return await agent.invoke("What is 2 + 3?");
    } finally {
      span.end();
    }
  });
  return { result, spans: exporter.getFinishedSpans() };
}

describe("OpenTelemetry spans of a code-action turn (official SDK, real engine, MCP server from npm)", () => {
  test("invoke_agent under the caller's span; chat and execute_program per attempt; tools under their program; MCP under its tool", async () => {
    const { result, spans } = await tracedTurn();
    expect(result.answer).toBe("5");
    // Every span but the program's is a GenAI operation; the program's is ours (issue 43 #6).
    expect(
      spans.every(
        (span) =>
          typeof span.attributes["gen_ai.operation.name"] === "string" ||
          span.name === "caller" ||
          span.attributes["codeaction.operation.name"] === "execute_program",
      ),
    ).toBe(true);
    expect(conventionProblems(spans)).toEqual([]);
    const caller = spans.find((span) => span.name === "caller");
    const [agentSpan, ...otherRoots] = childrenOf(spans, caller);
    expect(otherRoots).toEqual([]);
    expect(agentSpan?.name).toBe("invoke_agent codeaction");
    expect(agentSpan?.spanContext().traceId).toBe(caller?.spanContext().traceId);
    expect(agentSpan?.status.code).toBe(SpanStatusCode.OK);
    expect(agentSpan?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "codeaction.run_id": result.runId,
      "gen_ai.usage.input_tokens": 240,
      "gen_ai.usage.output_tokens": 50,
      "codeaction.usage.tool_calls": 3,
      "codeaction.usage.attempts": 2,
    });

    // The repair is a sibling of the first attempt under the agent span, not nested in it.
    const steps = childrenOf(spans, agentSpan);
    expect(steps.map((span) => [span.name, span.attributes["codeaction.attempt"]])).toEqual([
      ["chat scripted", 1],
      ["execute_program", 1],
      ["chat scripted", 2],
      ["execute_program", 2],
    ]);
    const [firstChat, firstProgramSpan, , secondProgramSpan] = steps;
    expect(firstChat?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "scripted",
      "gen_ai.request.model": "scripted",
      "gen_ai.usage.input_tokens": 100,
      "gen_ai.usage.output_tokens": 20,
    });
    expect(firstProgramSpan?.attributes["gen_ai.operation.name"]).toBeUndefined();
    expect(firstProgramSpan?.attributes).toMatchObject({
      "codeaction.operation.name": "execute_program",
      "codeaction.program.status": "error",
      "codeaction.program.exit_code": 1,
      "codeaction.sandbox.warm": false,
    });
    expect(firstProgramSpan?.attributes["codeaction.sandbox.runtime"]).toEqual(expect.any(String));
    expect(firstProgramSpan?.status.code).toBe(SpanStatusCode.ERROR);
    expect(secondProgramSpan?.status.code).toBe(SpanStatusCode.OK);
    expect(secondProgramSpan?.attributes["codeaction.program.duration_ms"]).toEqual(expect.any(Number));

    // Each bridged call is a child of the program that made it.
    const [brokenSpan] = childrenOf(spans, firstProgramSpan);
    expect(brokenSpan?.name).toBe("execute_tool broken");
    // Without recordContent a failure carries its type only, never its message (span-content.docker.test.ts).
    expect(brokenSpan?.status.code).toBe(SpanStatusCode.ERROR);
    expect(brokenSpan?.status.message).toBe(brokenSpan?.attributes["error.type"]);
    expect(brokenSpan?.status.message).not.toContain("warehouse");
    expect(brokenSpan?.events.map((event) => event.name)).toEqual(["exception"]);
    const secondCalls = childrenOf(spans, secondProgramSpan);
    expect(secondCalls.map((span) => span.name)).toEqual(["execute_tool add", "execute_tool echo"]);
    expect(secondCalls.map((span) => span.attributes["codeaction.tool.status"])).toEqual(["ok", "ok"]);
    expect(secondCalls[1]?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "codeaction.tool.origin": "mcp:everything",
    });
    // The MCP request is a child of its tool span.
    const [mcpCall] = childrenOf(spans, secondCalls[1]);
    expect(mcpCall?.name).toBe("tools/call echo");
    expect(mcpCall?.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "codeaction.mcp.server": "everything",
    });
    expect(childrenOf(spans, secondCalls[0])).toEqual([]);

    // Content stays out without the opt-in.
    const attributeKeys = spans.flatMap((span) => Object.keys(span.attributes));
    expect(attributeKeys).not.toContain("codeaction.program.text");
    expect(attributeKeys).not.toContain("gen_ai.tool.call.arguments");
  });

  test("recordContent adds programs, arguments and results, each cut to maxContentChars", async () => {
    const { spans } = await tracedTurn({ recordContent: true, maxContentChars: 80 });
    const programs = spans.filter((span) => span.name === "execute_program");
    expect(programs[0]?.attributes["codeaction.program.text"]).toBe(firstProgram);
    const cut = programs[1]?.attributes["codeaction.program.text"];
    expect(cut).toBe(`${secondProgram.slice(0, 80)}… [${secondProgram.length - 80} characters cut]`);
    const addSpan = spans.find((span) => span.name === "execute_tool add");
    expect(addSpan?.attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"a":2,"b":3}',
      "gen_ai.tool.call.result": "5",
    });
  });

  test("a run with steps: one execute_program span per step under invoke_agent, each naming its step; usage adds up", async () => {
    const model = new ScriptedChatModel([
      {
        content: programReply("total = add(a=2, b=3)\nprint(total)"),
        usage: { inputTokens: 100, outputTokens: 20 },
      },
      { content: programReply('print("RESULT:", total * 2)'), usage: { inputTokens: 150, outputTokens: 10 } },
    ]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      extraTools: [add],
      codeAction: { maxSteps: 2 },
    });
    const result = await agent.invoke("Twice 2 + 3?");
    expect(result.answer).toBe("10");
    const spans = exporter.getFinishedSpans();
    const agentSpan = spans.find((span) => span.name === "invoke_agent codeaction");
    const children = childrenOf(spans, agentSpan);
    expect(
      children
        .filter((span) => span.name === "execute_program")
        .map((span) => [span.attributes["codeaction.step"], span.attributes["codeaction.program.status"]]),
    ).toEqual([
      [1, "no-result"],
      [2, "ok"],
    ]);
    expect(agentSpan?.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 250,
      "gen_ai.usage.output_tokens": 30,
      "codeaction.usage.attempts": 2,
      "codeaction.usage.tool_calls": 1,
    });
    expect(result.usage).toMatchObject({ inputTokens: 250, outputTokens: 30, attempts: 2, toolCalls: 1 });
  });
});
