import { SpanStatusCode, trace } from "@opentelemetry/api";
import { describe, expect, test } from "vitest";
import { type BuildAgentOptions, buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";
import { childrenOf, recordSpansInMemory } from "./otel-setup.ts";

// The spans of shell mode (the tools pattern with the sandbox's tools) and of the warm pool, recorded
// by the official OpenTelemetry SDK against the real engine.

const exporter = recordSpansInMemory();

/** One invoke inside a caller's span; the finished spans. */
async function traced(options: BuildAgentOptions, question: string) {
  await using agent = await buildAgent(options);
  const result = await trace.getTracer("the caller").startActiveSpan("caller", async (span) => {
    try {
      return await agent.invoke(question);
    } finally {
      span.end();
    }
  });
  const spans = exporter.getFinishedSpans();
  const [agentSpan, ...otherRoots] = childrenOf(
    spans,
    spans.find((span) => span.name === "caller"),
  );
  expect(otherRoots).toEqual([]);
  return { result, spans, agentSpan };
}

describe("OpenTelemetry spans of shell mode (official SDK, real engine)", () => {
  test("chat and execute_tool spans of the sandbox tools under the agent span; a failed command is still a result", async () => {
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo counted 42 rows" } }] },
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo broken >&2; exit 3" } }] },
      "42",
    ]);
    const { result, spans, agentSpan } = await traced(
      { model, sandbox: { network: "none" } },
      "How many rows?",
    );
    expect(result.answer).toBe("42");
    expect(String(model.calls[2]?.messages.at(-1)?.content)).toMatch(/^exit code: 3 /);
    expect(agentSpan?.name).toBe("invoke_agent codeaction");
    expect(agentSpan?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "codeaction.pattern": "tools",
      "codeaction.usage.model_calls": 3,
      "codeaction.usage.tool_calls": 2,
    });
    const steps = childrenOf(spans, agentSpan);
    expect(steps.map((span) => span.name)).toEqual([
      "chat scripted",
      "execute_tool sandbox_exec",
      "chat scripted",
      "execute_tool sandbox_exec",
      "chat scripted",
    ]);
    const [, firstExec, , secondExec] = steps;
    for (const span of [firstExec, secondExec]) {
      expect(span?.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "sandbox_exec",
        "codeaction.tool.status": "ok",
      });
      expect(span?.attributes["gen_ai.tool.call.id"]).toEqual(expect.any(String));
      expect(span?.attributes["codeaction.tool.duration_ms"]).toEqual(expect.any(Number));
      expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
      // No execute_program in shell mode: the command runs inside the tool's span.
      expect(childrenOf(spans, span)).toEqual([]);
    }
    // Content stays out without the opt-in.
    expect(Object.keys(firstExec?.attributes ?? {})).not.toContain("gen_ai.tool.call.arguments");
  });

  test("recordContent puts the command and its output on the tool's span", async () => {
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo counted 42 rows" } }] },
      "42",
    ]);
    const { spans } = await traced(
      { model, sandbox: { network: "none" }, tracing: { recordContent: true, maxContentChars: 4000 } },
      "How many rows?",
    );
    const exec = spans.find((span) => span.name === "execute_tool sandbox_exec");
    expect(exec?.attributes["gen_ai.tool.call.arguments"]).toBe('{"command":"echo counted 42 rows"}');
    expect(exec?.attributes["gen_ai.tool.call.result"]).toMatch(/^"exit code: 0 .*counted 42 rows/);
  });
});

describe("OpenTelemetry spans and the warm pool (official SDK, real engine)", () => {
  const program = programReply('print("RESULT: 7")');

  test("execute_program says codeaction.sandbox.warm true when the container came from the pool", async () => {
    const model = new ScriptedChatModel([program]);
    const { result, spans } = await traced({ model, pattern: "code-action" }, "Seven?");
    expect(result.answer).toBe("7");
    const [programSpan, ...others] = spans.filter((span) => span.name === "execute_program");
    expect(others).toEqual([]);
    expect(programSpan?.attributes).toMatchObject({
      "codeaction.sandbox.warm": true,
      "codeaction.program.status": "ok",
    });
  });

  test("and false on the cold path (pool: 0)", async () => {
    const model = new ScriptedChatModel([program]);
    const { result, spans } = await traced(
      { model, pattern: "code-action", sandbox: { network: "none", pool: 0 } },
      "Seven?",
    );
    expect(result.answer).toBe("7");
    const programSpan = spans.find((span) => span.name === "execute_program");
    expect(programSpan?.attributes).toMatchObject({
      "codeaction.sandbox.warm": false,
      "codeaction.program.status": "ok",
    });
  });
});
