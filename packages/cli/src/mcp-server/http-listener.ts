import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createBoundedServer } from "../listener/bounded-server.ts";
import { bearerChecker } from "../listener/http-token.ts";
import { allowedHostnames, checkRequest } from "../listener/request-checks.ts";
import { type BodyBudget, createBodyBudget } from "./body-budget.ts";
import { readJsonBody } from "./request-body.ts";
import { closeWhenStalled } from "./stalled-connections.ts";

export type HttpListener = { url: string; close(): Promise<void> };

/**
 * Serves MCP over Streamable HTTP at `/mcp`, stateless: each POST gets its own server and transport
 * (nothing is kept between requests). Every request must name the bound address or localhost as
 * its Host, and any Origin too (else 403: a web page cannot reach the server through DNS
 * rebinding), and carry `Authorization: Bearer <token>` (else 401), whatever the bind.
 */
export async function listenHttp(options: {
  host: string;
  port: number;
  /** The bearer token every request must carry. */
  token: string;
  /** One MCP server for one request (its socket tells connections apart). */
  createServer: (request: IncomingMessage) => McpServer;
  onError?: (error: unknown) => void;
  /** Milliseconds a client may leave a reply unread before its connection is closed. */
  stallMs?: number;
  /** Bytes of request bodies read and parsed at once, all connections together (body-budget.ts). */
  bodyBudgetBytes?: number;
}): Promise<HttpListener> {
  const checks = { hostnames: allowedHostnames(options.host), tokenMatches: bearerChecker(options.token) };
  const bodyBudget = createBodyBudget(options.bodyBudgetBytes);
  // Each connection may hold a few runs and their replies (run-admission.ts): the connection cap bounds them all.
  const http = createBoundedServer((request, response) => {
    handle(request, response, { ...options, checks, bodyBudget }).catch((error: unknown) => {
      options.onError?.(error);
      if (!response.headersSent) respond(response, 500, "internal error");
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}/mcp`, close: () => closeServer(http) };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: {
    createServer: (request: IncomingMessage) => McpServer;
    checks: Parameters<typeof checkRequest>[1];
    stallMs?: number;
    bodyBudget: BodyBudget;
  },
): Promise<void> {
  const refusal = checkRequest(request, options.checks);
  if (refusal) return respond(response, refusal.status, refusal.message, refusal.headers);
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  if (path !== "/mcp") return respond(response, 404, "not found: the MCP endpoint is /mcp");
  if (request.method !== "POST") {
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    response.setHeader("Allow", "POST");
    return respond(response, 405, "method not allowed: this server is stateless, POST only");
  }
  const read = await readJsonBody(request, options.bodyBudget);
  if (!("body" in read)) return respond(response, read.status, read.message);
  closeWhenStalled(response, options.stallMs);
  const server = options.createServer(request);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, read.body);
}

function respond(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { ...headers, "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function closeServer(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
