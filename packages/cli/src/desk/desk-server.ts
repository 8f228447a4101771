import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { cliAssets } from "../cli-assets.ts";
import { supportedExtensions } from "../data-files/data-formats.ts";
import { describeError } from "./desk-errors.ts";
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
const mediaTypes: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  png: "image/png",
  svg: "image/svg+xml",
  csv: "text/csv; charset=utf-8",
  json: "application/json",
  txt: "text/plain; charset=utf-8",
};

/** The largest request body the desk reads (a question and its options). */
export const maxRequestBytes = 64 * 1024;
/** The largest file the desk serves (a run's file is at most 10 MiB). */
const maxServedBytes = 20 * 1024 * 1024;

export type DeskListener = { url: string; port: number; close(): Promise<void> };

/** Serves the desk on `host:port` (0: a free port); every request is checked first (desk-security.ts). */
export async function listenDesk(options: {
  host: string;
  port: number;
  token: string;
  session: DeskSession;
}): Promise<DeskListener> {
  // The port is known once the server listens (0 asks for a free one); requests come after.
  let port = options.port;
  const check = deskChecker({ host: options.host, token: options.token, port: () => port });
  const http = createServer((request, response) => {
    const refusal = check(request);
    if (refusal) return respondJson(response, refusal.status, { error: refusal.message });
    route(request, response, { ...options, port }).catch((error: unknown) => {
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
    close: () => closeServer(http),
  };
}

async function route(
  request: IncomingMessage,
  response: ServerResponse,
  options: { token: string; session: DeskSession; port: number },
): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  const path = url.pathname;
  if (request.method === "GET" && path === "/" && url.searchParams.has("token")) {
    // The first visit: the token moves into an HttpOnly cookie and out of the address bar.
    response.writeHead(303, {
      ...securityHeaders,
      location: "/",
      "set-cookie": `${tokenCookie(options.port)}=${options.token}; HttpOnly; SameSite=Strict; Path=/`,
    });
    return void response.end();
  }
  const asset = assets[path];
  if (request.method === "GET" && asset) return serveFile(response, cliAssets.path(asset));
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
    return serveOutput(response, path, options.session);
  if (request.method === "POST" && path === "/api/ask") return ask(request, response, options.session);
  respondJson(response, 404, { error: `not found: ${path}` });
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
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  try {
    await askInDesk(session, { question, newConversation: parsed.newConversation === true, send });
  } finally {
    session.busy = false;
    response.end();
  }
}

/** GET /out/<runId>/<name>: a file a run brought back, from the desk's own output folder only. */
async function serveOutput(response: ServerResponse, path: string, session: DeskSession): Promise<void> {
  const parts = path.split("/").slice(2).map(decodeURIComponent);
  const [runId, name] = parts;
  const safe = /^[A-Za-z0-9._-]+$/;
  if (
    parts.length !== 2 ||
    !runId ||
    !name ||
    !safe.test(runId) ||
    !safe.test(name) ||
    name.startsWith(".")
  ) {
    return respondJson(response, 404, { error: "not found" });
  }
  const folder = join(session.outRoot, runId);
  const status = await lstat(folder).catch(() => undefined);
  if (!status?.isDirectory()) return respondJson(response, 404, { error: "not found" });
  return serveFile(response, join(folder, name), { download: !/\.(png|svg)$/i.test(name) });
}

/** Sends a regular file, never through a symbolic link (O_NOFOLLOW), bounded in size. */
async function serveFile(
  response: ServerResponse,
  path: string,
  options: { download?: boolean } = {},
): Promise<void> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!file) return respondJson(response, 404, { error: "not found" });
  try {
    const status = await file.stat();
    if (!status.isFile() || status.size > maxServedBytes)
      return respondJson(response, 404, { error: "not found" });
    const bytes = await file.readFile();
    const extension = path.split(".").at(-1)?.toLowerCase() ?? "";
    const name = path.split("/").at(-1) ?? "file";
    response.writeHead(200, {
      ...securityHeaders,
      "content-type": mediaTypes[extension] ?? "application/octet-stream",
      ...(options.download ? { "content-disposition": `attachment; filename="${name}"` } : {}),
    });
    response.end(bytes);
  } finally {
    await file.close();
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
