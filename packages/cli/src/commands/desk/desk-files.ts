import { constants } from "node:fs";
import { lstat, open } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { outputFileHeaders, securityHeaders } from "./desk-security.ts";

/** The page's own files: what the browser may run or style with. */
const pageMediaTypes: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
};

/**
 * The types a run's file is served as: only inert ones (no HTML, no script, no XML but SVG, which
 * the page shows through <img>, where it runs nothing); anything else is application/octet-stream.
 */
const outputMediaTypes: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  svg: "image/svg+xml",
  csv: "text/csv; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  json: "application/json",
};

/** The largest file the desk serves (a run's file is at most 10 MiB). */
const maxServedBytes = 20 * 1024 * 1024;

/** The page's own file (index.html, desk.js, desk.css), with `replace` applied to its text when given. */
export async function servePageFile(
  response: ServerResponse,
  path: string,
  replace?: (text: string) => string,
): Promise<void> {
  const bytes = await readRegularFile(path);
  if (!bytes) return notFound(response);
  const extension = extensionOf(path);
  response.writeHead(200, {
    ...securityHeaders,
    "content-type": pageMediaTypes[extension] ?? "application/octet-stream",
  });
  response.end(replace ? replace(bytes.toString("utf8")) : bytes);
}

/**
 * GET /out/<runId>/<name>: a file a run brought back, from the desk's own output folder only, with
 * the headers of outputFileHeaders: nothing a program wrote ever runs on the desk's origin.
 */
export async function serveOutput(response: ServerResponse, path: string, outRoot: string): Promise<void> {
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
    return notFound(response);
  }
  const folder = join(outRoot, runId);
  const status = await lstat(folder).catch(() => undefined);
  if (!status?.isDirectory()) return notFound(response);
  const bytes = await readRegularFile(join(folder, name));
  if (!bytes) return notFound(response);
  response.writeHead(200, {
    ...outputFileHeaders(name),
    "content-type": outputMediaTypes[extensionOf(name)] ?? "application/octet-stream",
  });
  response.end(bytes);
}

/** A regular file's bytes, never through a symbolic link (O_NOFOLLOW), bounded in size; undefined otherwise. */
async function readRegularFile(path: string): Promise<Buffer | undefined> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    () => undefined,
  );
  if (!file) return undefined;
  try {
    const status = await file.stat();
    if (!status.isFile() || status.size > maxServedBytes) return undefined;
    return await file.readFile();
  } finally {
    await file.close();
  }
}

function extensionOf(path: string): string {
  const name = path.split("/").at(-1) ?? "";
  return name.includes(".") ? (name.split(".").at(-1)?.toLowerCase() ?? "") : "";
}

function notFound(response: ServerResponse): void {
  response.writeHead(404, { ...securityHeaders, "content-type": "application/json" });
  response.end(JSON.stringify({ error: "not found" }));
}
