import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback, readJson, sendJson } from "./fixture-server.ts";
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

/**
 * A small local OpenAI-compatible server that plays scripted replies, so a test can drive the real
 * `ChatOpenAI` client over HTTP. Listens on 127.0.0.1 on a random port. Answers
 * POST /v1/chat/completions, plain or streamed (SSE) as the client asks. When the replies run
 * out it answers 400 with an error naming the problem (400 so the client does not retry). With
 * `failures`, the first requests get an HTTP error instead (a provider that is down).
 */
export async function startOpenAIFixture(options: {
  replies: ScriptedReply[];
  /**
   * The first `count` requests (default: every one) are answered with HTTP `status` and OpenAI's
   * error body instead of a reply, as a provider that is down or busy answers: for testing retries.
   */
  failures?: { status: number; count?: number; headers?: Record<string, string> };
  /**
   * The first `count` requests (default: every one) are read and never answered, as a provider
   * that accepts the connection and hangs: for testing timeouts. `close()` ends them.
   */
  silent?: { count?: number };
}): Promise<OpenAIFixture> {
  const replies = [...options.replies];
  const { failures, silent } = options;
  let failed = 0;
  let silenced = 0;
  const requests: OpenAIFixtureRequest[] = [];
  let next = 0;

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    const body = await readJson(request);
    requests.push({ method: request.method ?? "GET", path, body });
    if (silent && silenced < (silent.count ?? Number.POSITIVE_INFINITY)) {
      silenced += 1;
      return;
    }
    if (failures && failed < (failures.count ?? Number.POSITIVE_INFINITY)) {
      failed += 1;
      sendFailure(response, failures);
      return;
    }
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
    sendReply(response, body, normalize(reply, next), next);
  };

  const server = await listenOnLoopback(handle, (response, message) => sendError(response, 500, message));
  return { baseURL: `http://127.0.0.1:${server.port}/v1`, requests, close: server.close };
}

/** OpenAI's error body with `failures.status` (and its headers): a provider that is down or busy. */
function sendFailure(
  response: ServerResponse,
  failures: { status: number; headers?: Record<string, string> },
) {
  const error = {
    message: "The server had an error while processing your request.",
    type: "server_error",
    param: null,
    code: null,
  };
  sendJson(response, failures.status, { error }, failures.headers);
}

/** The `number`th reply, as one chat.completion or streamed as the request asks. */
function sendReply(
  response: ServerResponse,
  body: Record<string, unknown>,
  { content, toolCalls, usage }: ReturnType<typeof normalize>,
  number: number,
): void {
  const model = typeof body.model === "string" ? body.model : "fixture";
  const id = `chatcmpl-fixture-${number}`;
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

function sendError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, { error: { message, type: "invalid_request_error", code: "fixture" } });
}
