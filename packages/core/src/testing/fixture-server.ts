import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The HTTP plumbing the provider fixtures share: a loopback server, a size-capped JSON body, a
 * JSON reply. What each fixture answers (its wire format) stays in its own file.
 */

/** A fixture's server, listening on 127.0.0.1. */
export type LoopbackServer = { port: number; close(): Promise<void> };

const maxBodyBytes = 10 * 1024 * 1024;

/**
 * Serves `handle` on 127.0.0.1, on a random port. A handler that throws gets `onFailure`, which
 * answers the request (a fixture's own error shape).
 */
export async function listenOnLoopback(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  onFailure: (response: ServerResponse, message: string) => void,
): Promise<LoopbackServer> {
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      onFailure(response, `fixture failure: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request's JSON object body ({} when empty or not an object); over 10 MiB throws. */
export async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
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

/** A JSON reply with its length; after headers were sent, only ends the response. */
export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  response.end(text);
}
