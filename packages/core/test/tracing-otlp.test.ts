import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tool } from "@langchain/core/tools";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BudgetExceededError, buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { registerTracerProvider } from "./otel-setup.ts";

// The tools pattern's spans exported for real: the official OTLP/HTTP exporter posts them to a
// receiver on loopback (bearer token checked, bodies bounded), and they are parsed back.

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpSpan = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number; message?: string };
};

const token = "test-token-3f9c";
const received: OtlpSpan[] = [];
const receiver = createServer(async (request, response) => {
  if (request.headers.authorization !== `Bearer ${token}` || request.url !== "/v1/traces") {
    response.writeHead(401).end();
    return;
  }
  const body = JSON.parse(await readBounded(request, 1024 * 1024)) as {
    resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
  };
  for (const resource of body.resourceSpans)
    for (const scope of resource.scopeSpans) received.push(...scope.spans);
  response.writeHead(200, { "content-type": "application/json" }).end("{}");
});

async function readBounded(request: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit) throw new Error("an OTLP body over the test's bound");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

// Closed after the provider shuts down (Vitest runs afterAll hooks last registered first).
afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
});
const provider = registerTracerProvider(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const { port } = receiver.address() as AddressInfo;
  return new OTLPTraceExporter({
    url: `http://127.0.0.1:${port}/v1/traces`,
    headers: { authorization: `Bearer ${token}` },
  });
});

const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes.find((entry) => entry.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? value?.boolValue : Number(value.intValue));
};

const lookup = tool(async ({ city }: { city: string }) => ({ city, population: 522_000 }), {
  name: "lookup_city",
  description: "Population of a city.",
  schema: z.object({ city: z.string() }),
});

describe("spans over OTLP/HTTP (official exporter, loopback receiver)", () => {
  it("a tools-pattern run: invoke_agent with chat and execute_tool children, usage on the agent span", async () => {
    received.length = 0;
    const model = new ScriptedChatModel([
      {
        toolCalls: [{ name: "lookup_city", args: { city: "Lyon" } }],
        usage: { inputTokens: 11, outputTokens: 3 },
      },
      { content: "About 522,000.", usage: { inputTokens: 17, outputTokens: 5 } },
    ]);
    await using agent = await buildAgent({ model, extraTools: [lookup] });
    const result = await agent.invoke("How many people live in Lyon?");
    await provider.forceFlush();

    const agentSpan = received.find((span) => span.name === "invoke_agent codeaction");
    expect(attribute(agentSpan, "codeaction.run_id")).toBe(result.runId);
    expect(attribute(agentSpan, "gen_ai.usage.input_tokens")).toBe(28);
    expect(agentSpan?.parentSpanId ?? "").toBe("");
    const children = received.filter((span) => span.parentSpanId === agentSpan?.spanId);
    expect(children.map((span) => span.name).sort()).toEqual([
      "chat scripted",
      "chat scripted",
      "execute_tool lookup_city",
    ]);
    expect(children.every((span) => span.traceId === agentSpan?.traceId)).toBe(true);
    const toolSpan = children.find((span) => span.name === "execute_tool lookup_city");
    expect(attribute(toolSpan, "gen_ai.operation.name")).toBe("execute_tool");
    expect(attribute(toolSpan, "codeaction.tool.status")).toBe("ok");
    expect(received.every((span) => typeof attribute(span, "gen_ai.operation.name") === "string")).toBe(true);
  });

  it("a run stopped by its budget: the agent span records the error and the exception", async () => {
    received.length = 0;
    const model = new ScriptedChatModel([
      { toolCalls: [{ name: "lookup_city", args: { city: "Lyon" } }] },
      "done",
    ]);
    await using agent = await buildAgent({ model, extraTools: [lookup], budget: { maxModelCalls: 1 } });
    await expect(agent.invoke("Lyon?")).rejects.toSatisfy(BudgetExceededError.isInstance);
    await provider.forceFlush();
    const agentSpan = received.find((span) => span.name === "invoke_agent codeaction");
    expect(agentSpan?.status).toMatchObject({ code: 2 });
    // The error's type only: its message is content, recorded only with recordContent.
    expect(agentSpan?.status?.message).toBe("budget-exceeded");
    expect(attribute(agentSpan, "error.type")).toBe("budget-exceeded");
  });
});
