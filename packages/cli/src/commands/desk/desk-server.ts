import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cliAssets } from "../../cli-assets.ts";
import { supportedExtensions } from "../../data-files/data-formats.ts";
import { createBoundedServer } from "../../listener/bounded-server.ts";
import { createToken } from "../../listener/http-token.ts";
import { describeError } from "./desk-errors.ts";
import { serveOutput, servePageFile } from "./desk-files.ts";
import { type LoginNonces, loginLifetimeMs, loginNonces } from "./desk-login.ts";
import { readPastRuns } from "./desk-runs.ts";
import { deskChecker, securityHeaders, tokenCookie } from "./desk-security.ts";
import { askInDesk, type DeskEvent, type DeskSession } from "./desk-session.ts";
import { maxUploadBytes, receiveUpload } from "./desk-upload.ts";

/** The page's own files, served by name from the package's assets/desk folder (cli-assets.ts); nothing else. */
const assets: Record<string, "desk/index.html" | "desk/desk.js" | "desk/desk.css"> = {
  "/": "desk/index.html",
  "/desk.js": "desk/desk.js",
  "/desk.css": "desk/desk.css",
};

/** The largest request body the desk reads (a question and its options). */
export const maxRequestBytes = 64 * 1024;

export type DeskListener = {
  /** The address to print: it carries the token, for the user to open or paste. */
  url: string;
  port: number;
  /** An address for `--open`: a single-use login nonce good for `loginLifetimeMs`, never the token. */
  loginUrl(): string;
  close(): Promise<void>;
};

type RouteOptions = {
  token: string;
  pageToken: string;
  session: DeskSession;
  port: number;
  logins: LoginNonces;
};

/** Serves the desk on `host:port` (0: a free port); every request is checked first (desk-security.ts). */
export async function listenDesk(options: {
  host: string;
  port: number;
  token: string;
  session: DeskSession;
  /** The clock login nonces expire by (tests give their own). */
  now?: () => number;
}): Promise<DeskListener> {
  // The port is known once the server listens (0 asks for a free one); requests come after.
  let port = options.port;
  // The page's own token: given inside the page, sent back in a header, so a cookie alone acts on nothing.
  const pageToken = createToken();
  const logins = loginNonces(options.now ? { now: options.now } : {});
  const check = deskChecker({ host: options.host, token: options.token, pageToken, port: () => port });
  // At most 64 connections, and a request's head and body within their time (as codeaction mcp --http).
  const http = createBoundedServer((request, response) => {
    const refusal = check(request);
    if (refusal) return respondJson(response, refusal.status, { error: refusal.message });
    route(request, response, { ...options, pageToken, logins, port }).catch((error: unknown) => {
      if (!response.headersSent) respondJson(response, 500, describeError(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  port = (http.address() as AddressInfo).port;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/?token=${encodeURIComponent(options.token)}`,
    port,
    loginUrl: () => `http://${host}:${port}/?login=${logins.issue()}`,
    close: () => closeServer(http),
  };
}

async function route(
  request: IncomingMessage,
  response: ServerResponse,
  options: RouteOptions,
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  const path = url.pathname;
  if (
    request.method === "GET" &&
    path === "/" &&
    (url.searchParams.has("token") || url.searchParams.has("login"))
  )
    return logIn(response, url, options);
  const asset = assets[path];
  if (request.method === "GET" && asset) {
    return servePageFile(response, cliAssets.path(asset), (text) =>
      text.replace(
        '<meta name="codeaction-page" content="">',
        `<meta name="codeaction-page" content="${options.pageToken}">`,
      ),
    );
  }
  if (request.method === "GET" && path === "/api/files") {
    return respondJson(response, 200, {
      files: options.session.files.map((file) => file.path),
      maxUploadBytes,
      extensions: supportedExtensions,
    });
  }
  if (request.method === "GET" && path === "/api/runs") {
    const { journalPath } = options.session;
    return respondJson(response, 200, { runs: journalPath ? await readPastRuns(journalPath) : [] });
  }
  if (request.method === "POST" && path === "/api/upload") {
    const answer = await receiveUpload(request, options.session, url.searchParams.get("name"));
    // A refused body is not read to its end: the connection closes after the answer.
    const headers: Record<string, string> = answer.status === 200 ? {} : { connection: "close" };
    return respondJson(response, answer.status, answer.body, headers);
  }
  if (request.method === "GET" && path.startsWith("/out/"))
    return serveOutput(response, path, options.session.outRoot);
  if (request.method === "POST" && path === "/api/ask") return ask(request, response, options.session);
  respondJson(response, 404, { error: `not found: ${path}` });
}

/**
 * The first visit: `?token=` (checked by deskChecker) or a login nonce (used up here) becomes the
 * HttpOnly cookie, and the address bar no longer carries either.
 */
function logIn(response: ServerResponse, url: URL, options: RouteOptions): void {
  const nonce = url.searchParams.get("login");
  if (nonce !== null && !options.logins.redeem(nonce)) {
    respondJson(response, 401, {
      error: `unauthorized: this login address was used already or is over ${loginLifetimeMs / 1000} s old; open the address codeaction desk printed`,
    });
    return;
  }
  response.writeHead(303, {
    ...securityHeaders,
    location: "/",
    "set-cookie": `${tokenCookie(options.port)}=${options.token}; HttpOnly; SameSite=Strict; Path=/`,
  });
  response.end();
}

/** POST /api/ask {question, newConversation}: the turn's progress and answer as Server-Sent Events. */
async function ask(request: IncomingMessage, response: ServerResponse, session: DeskSession): Promise<void> {
  const body = await readBody(request, maxRequestBytes);
  if (body === undefined)
    return respondJson(response, 413, { error: `the request is over ${maxRequestBytes} bytes` });
  let parsed: { question?: unknown; newConversation?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return respondJson(response, 400, { error: "the request is not JSON" });
  }
  const question = typeof parsed.question === "string" ? parsed.question.trim() : "";
  if (question === "") return respondJson(response, 400, { error: "give a question" });
  if (session.busy)
    return respondJson(response, 409, { error: "a question is running; wait for its answer" });
  session.busy = true;
  response.writeHead(200, { ...securityHeaders, "content-type": "text/event-stream; charset=utf-8" });
  const send = ({ event, data }: DeskEvent) => {
    if (!response.destroyed) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  // The page went away (its tab closed, its request cut) before the answer: the run is cancelled,
  // its containers removed, and the desk is free for the next question.
  const pageGone = new AbortController();
  response.once("close", () => {
    if (!response.writableFinished) pageGone.abort(new Error("the page that asked went away"));
  });
  try {
    await askInDesk(session, {
      question,
      newConversation: parsed.newConversation === true,
      send,
      signal: pageGone.signal,
    });
  } finally {
    session.busy = false;
    response.end();
  }
}

/** The body as text, or undefined once it passes `limit` bytes (the rest is not read). */
function readBody(request: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function respondJson(
  response: ServerResponse,
  status: number,
  body: object,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { ...securityHeaders, "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

function closeServer(http: Server): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
