import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ChatAnthropic } from "@langchain/anthropic";
import { tool } from "@langchain/core/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildAgent, ConfigError } from "../src/index.ts";
import { loadModel } from "../src/model.ts";

type Block = { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: unknown };

/**
 * A loopback server speaking Anthropic's Messages API (POST /v1/messages): each request gets the
 * next scripted content, as one JSON message or as the SSE events the real API streams.
 */
async function startAnthropicFixture(replies: Block[][]) {
  const requests: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      requests.push({ path: request.url, apiKey: request.headers["x-api-key"], ...parsed });
      const content = replies.shift();
      if (!content || request.url !== "/v1/messages") {
        response.writeHead(400, { "content-type": "application/json" });
        response.end(
          JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "no reply" } }),
        );
        return;
      }
      const stopReason = content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn";
      const message = {
        id: `msg_${requests.length}`,
        type: "message",
        role: "assistant",
        model: parsed.model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 7 },
      };
      if (parsed.stream !== true) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify(message));
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const send = (event: string, data: unknown) =>
        response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send("message_start", {
        type: "message_start",
        message: { ...message, content: [], stop_reason: null },
      });
      content.forEach((block, index) => {
        const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
        send("content_block_start", { type: "content_block_start", index, content_block: start });
        const delta =
          block.type === "text"
            ? { type: "text_delta", text: block.text }
            : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
        send("content_block_delta", { type: "content_block_delta", index, delta });
        send("content_block_stop", { type: "content_block_stop", index });
      });
      send("message_delta", {
        type: "message_delta",
        delta: { stop_reason: stopReason },
        usage: { output_tokens: 7 },
      });
      send("message_stop", { type: "message_stop" });
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const saved = { ...process.env };
afterEach(() => {
  for (const key of ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COHERE_API_KEY"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe("provider strings", () => {
  it('"anthropic:<model>" loads @langchain/anthropic and drives a tools-pattern turn over its real wire format', async () => {
    const fixture = await startAnthropicFixture([
      [{ type: "tool_use", id: "toolu_1", name: "add", input: { a: 20, b: 22 } }],
      [{ type: "text", text: "The sum is 42." }],
    ]);
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    process.env.ANTHROPIC_BASE_URL = fixture.baseURL;
    try {
      const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
        name: "add",
        description: "Add two numbers.",
        schema: z.object({ a: z.number(), b: z.number() }),
      });
      await using agent = await buildAgent({ model: "anthropic:claude-sonnet-4-5", extraTools: [add] });
      const result = await agent.invoke("What is 20 + 22?");
      expect(result.answer).toBe("The sum is 42.");
      expect(result.toolCalls[0]).toMatchObject({ tool: "add", status: "ok", result: 42 });
      expect(fixture.requests[0]).toMatchObject({
        path: "/v1/messages",
        model: "claude-sonnet-4-5",
        apiKey: "sk-ant-test",
      });
      expect(JSON.stringify(fixture.requests[0]?.tools)).toContain('"name":"add"');
      // The tool result went back as Anthropic's tool_result block for the call's id.
      expect(JSON.stringify(fixture.requests[1]?.messages)).toContain('"tool_use_id":"toolu_1"');
    } finally {
      await fixture.close();
    }
  });

  it("a string for a provider whose package is not installed is a ConfigError naming the package", async () => {
    process.env.COHERE_API_KEY ??= "test";
    const error = await loadModel("cohere:command-r").catch((thrown: unknown) => thrown);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain("needs the package @langchain/cohere");
    expect((error as Error).message).toContain("npm install @langchain/cohere");
  });

  it("a missing provider key is refused at build time, naming the variable", async () => {
    delete process.env.ANTHROPIC_API_KEY;
    await expect(loadModel("anthropic:claude-sonnet-4-5")).rejects.toThrow(
      /needs ANTHROPIC_API_KEY, which is not set/,
    );
    process.env.ANTHROPIC_API_KEY = "sk-ant-test";
    expect(await loadModel("anthropic:claude-sonnet-4-5")).toBeInstanceOf(ChatAnthropic);
  });
});
