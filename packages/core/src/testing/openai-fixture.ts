import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ScriptedReply } from "./scripted-chat-model.ts";

/** A request the fixture received: the path and the parsed JSON body. */
export type OpenAIFixtureRequest = { method: string; path: string; body: Record<string, unknown> };

/** A local OpenAI-compatible HTTP server playing scripted replies (`startOpenAIFixture`), with the requests it received. */
export type OpenAIFixture = {
  /** The base URL to give the client (`OPENAI_BASE_URL`), ending in `/v1`. */
  baseURL: string;
  /** Every request, in order. */
  requests: OpenAIFixtureRequest[];
  close(): Promise<void>;
};

const maxBodyBytes = 10 * 1024 * 1024;

/**
 * A small local OpenAI-compatible server that plays scripted replies, so a test can drive the real
 * `ChatOpenAI` client over HTTP. Listens on 127.0.0.1 on a random port. Answers
 * POST /v1/chat/completions, plain or streamed (SSE) as the client asks. When the replies run
 * out it answers 400 with an error naming the problem (400 so the client does not retry).
 */
export async function startOpenAIFixture(options: { replies: ScriptedReply[] }): Promise<OpenAIFixture> {
  const replies = [...options.replies];
  const requests: OpenAIFixtureRequest[] = [];
  let next = 0;

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      sendError(response, 500, `fixture failure: ${error instanceof Error ? error.message : String(error)}`);
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const body = await readJson(request);
    requests.push({ method: request.method ?? "GET", path, body });
    if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
      sendError(
        response,
        404,
        `the fixture only answers POST /v1/chat/completions, not ${request.method} ${path}`,
      );
      return;
    }
    const reply = replies[next];
    if (reply === undefined) {
      sendError(
        response,
        400,
        `the fixture has no reply left for request #${next + 1} (it was given ${replies.length})`,
      );
      return;
    }
    next += 1;
    const model = typeof body.model === "string" ? body.model : "fixture";
    const id = `chatcmpl-fixture-${next}`;
    const { content, toolCalls, usage } = normalize(reply, next);
    if (body.stream === true) {
      const includeUsage =
        (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      streamReply(response, { id, model, content, toolCalls, usage, includeUsage });
      return;
    }
    sendJson(response, 200, {
      id,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
          finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
          logprobs: null,
        },
      ],
      usage,
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type ToolCallPayload = { id: string; type: "function"; function: { name: string; arguments: string } };
type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

function normalize(
  reply: ScriptedReply,
  number: number,
): { content: string; toolCalls: ToolCallPayload[]; usage: Usage } {
  const content = typeof reply === "string" ? reply : (reply.content ?? "");
  const calls = typeof reply === "string" ? [] : (reply.toolCalls ?? []);
  const toolCalls = calls.map((call, index) => ({
    id: call.id ?? `call_${number}_${index + 1}`,
    type: "function" as const,
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  }));
  const prompt = typeof reply !== "string" && reply.usage ? reply.usage.inputTokens : 100;
  const completion =
    typeof reply !== "string" && reply.usage ? reply.usage.outputTokens : Math.ceil(content.length / 4);
  return {
    content,
    toolCalls,
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

function streamReply(
  response: ServerResponse,
  reply: {
    id: string;
    model: string;
    content: string;
    toolCalls: ToolCallPayload[];
    usage: Usage;
    includeUsage: boolean;
  },
): void {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const created = Math.floor(Date.now() / 1000);
  const chunk = (
    delta: Record<string, unknown>,
    finishReason: string | null,
    extra: Record<string, unknown> = {},
  ) =>
    `data: ${JSON.stringify({
      id: reply.id,
      object: "chat.completion.chunk",
      created,
      model: reply.model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      ...extra,
    })}\n\n`;
  response.write(chunk({ role: "assistant", content: "" }, null));
  // Content in a few pieces, as a real server streams it.
  for (let offset = 0; offset < reply.content.length; offset += 64) {
    response.write(chunk({ content: reply.content.slice(offset, offset + 64) }, null));
  }
  reply.toolCalls.forEach((call, index) => {
    response.write(
      chunk(
        {
          tool_calls: [
            { index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
          ],
        },
        null,
      ),
    );
    response.write(
      chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }, null),
    );
  });
  response.write(chunk({}, reply.toolCalls.length > 0 ? "tool_calls" : "stop"));
  if (reply.includeUsage) {
    response.write(
      `data: ${JSON.stringify({ id: reply.id, object: "chat.completion.chunk", created, model: reply.model, choices: [], usage: reply.usage })}\n\n`,
    );
  }
  response.end("data: [DONE]\n\n");
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) throw new Error(`request body over ${maxBodyBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  return parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}

function sendError(response: ServerResponse, status: number, message: string): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  sendJson(response, status, { error: { message, type: "invalid_request_error", code: "fixture" } });
}
