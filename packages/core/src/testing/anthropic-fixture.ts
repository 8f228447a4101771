import type { IncomingMessage, ServerResponse } from "node:http";
import { listenOnLoopback, readJson, sendJson } from "./fixture-server.ts";

/** A running Anthropic Messages-API fixture: its base URL (ANTHROPIC_BASE_URL), the requests it got, close(). */
export type AnthropicFixture = {
  baseURL: string;
  /** Each request's JSON body, with its `path` and `apiKey` (the x-api-key header). */
  requests: Record<string, unknown>[];
  close(): Promise<void>;
};

/** One content block of a scripted Anthropic reply: text, or a tool_use the model asks for. */
export type AnthropicFixtureBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/**
 * A loopback server speaking Anthropic's Messages API (POST /v1/messages): each request gets the
 * next scripted content, as one JSON message or as the SSE events the real API streams.
 */
export async function startAnthropicFixture(replies: AnthropicFixtureBlock[][]): Promise<AnthropicFixture> {
  const queue = [...replies];
  const requests: Record<string, unknown>[] = [];
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const parsed = await readJson(request);
    requests.push({ path: request.url, apiKey: request.headers["x-api-key"], ...parsed });
    const content = queue.shift();
    if (!content || request.url !== "/v1/messages") {
      sendError(response, 400, "no reply");
      return;
    }
    const message = {
      id: `msg_${requests.length}`,
      type: "message",
      role: "assistant",
      model: parsed.model,
      content,
      stop_reason: content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 7 },
    };
    if (parsed.stream === true) streamMessage(response, message);
    else sendJson(response, 200, message);
  };
  const server = await listenOnLoopback(handle, (response, message) => sendError(response, 500, message));
  return { baseURL: `http://127.0.0.1:${server.port}`, requests, close: server.close };
}

/** The message as the SSE events the real API streams: start, each block, delta, stop. */
function streamMessage(
  response: ServerResponse,
  message: { content: AnthropicFixtureBlock[]; stop_reason: string },
): void {
  response.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: unknown) =>
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send("message_start", {
    type: "message_start",
    message: { ...message, content: [], stop_reason: null },
  });
  message.content.forEach((block, index) => {
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
    delta: { stop_reason: message.stop_reason },
    usage: { output_tokens: 7 },
  });
  send("message_stop", { type: "message_stop" });
  response.end();
}

/** An error as the Messages API sends one. */
function sendError(response: ServerResponse, status: number, message: string): void {
  sendJson(response, status, { type: "error", error: { type: "invalid_request_error", message } });
}
