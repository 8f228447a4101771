import { createServer, type RequestListener, type Server } from "node:http";

/** Connections open at once; more are closed as they come. */
export const maxConnections = 64;
/** Milliseconds a client has to send a request's head and body; past them the connection is closed (408). */
export const requestTimeoutMs = 60_000;
/** Milliseconds a client has to send a request's head (Node's default, said here so both listeners keep it). */
export const headersTimeoutMs = 60_000;

/**
 * An HTTP server with the bounds every listener of ours keeps (`codeaction mcp --http` and the
 * desk): at most `maxConnections` connections, and a request's head and body must arrive within
 * their timeouts, so unauthenticated clients that open connections and send half a request cannot
 * hold the server's sockets.
 */
export function createBoundedServer(handler: RequestListener): Server {
  const http = createServer({ requestTimeout: requestTimeoutMs, headersTimeout: headersTimeoutMs }, handler);
  http.maxConnections = maxConnections;
  return http;
}
