import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server as McpServer } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

const loopbackHosts = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export type HttpListener = { url: string; close(): Promise<void> };

/**
 * Serves MCP over Streamable HTTP at `/mcp`, stateless: each POST gets its own server and transport
 * (nothing is kept between requests). On a loopback address, requests whose Host or Origin is not
 * loopback are refused (403), so a web page cannot reach the server through DNS rebinding.
 */
export async function listenHttp(options: {
  host: string;
  port: number;
  createServer: () => McpServer;
  onError?: (error: unknown) => void;
}): Promise<HttpListener> {
  const loopbackOnly = loopbackHosts.has(options.host);
  const http = createServer((request, response) => {
    handle(request, response, { ...options, loopbackOnly }).catch((error: unknown) => {
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
  options: { createServer: () => McpServer; loopbackOnly: boolean },
): Promise<void> {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  if (path !== "/mcp") return respond(response, 404, "not found: the MCP endpoint is /mcp");
  if (options.loopbackOnly && !isLoopbackRequest(request)) {
    return respond(response, 403, "forbidden: Host and Origin must be loopback");
  }
  if (request.method !== "POST") {
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    response.setHeader("Allow", "POST");
    return respond(response, 405, "method not allowed: this server is stateless, POST only");
  }
  const server = options.createServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response);
}

function isLoopbackRequest(request: IncomingMessage): boolean {
  const hostHeader = request.headers.host;
  if (hostHeader === undefined || !loopbackHosts.has(hostnameOf(`http://${hostHeader}`))) return false;
  const origin = request.headers.origin;
  return origin === undefined || loopbackHosts.has(hostnameOf(origin));
}

function hostnameOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

function respond(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function closeServer(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
