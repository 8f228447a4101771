import type { IncomingMessage } from "node:http";
import type { Refusal } from "../listener/request-checks.ts";
import type { BodyBudget } from "./body-budget.ts";

/** Bytes one request body may have: a 1,000,000-character program escaped in JSON, and room to spare. */
export const maxBodyBytes = 8 * 1024 * 1024;
/** Messages one JSON-RPC batch may hold. */
export const maxBatchMessages = 4;

/**
 * The request's body as parsed JSON, read up to `maxBodyBytes` (413 beyond, without reading the
 * rest), or a refusal: not JSON (400), a batch over `maxBatchMessages` (400). With a `budget`, the
 * body waits for its bytes there before any is read (body-budget.ts), and gives them back once parsed.
 */
export async function readJsonBody(
  request: IncomingMessage,
  budget?: BodyBudget,
): Promise<{ body: unknown } | Refusal> {
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > maxBodyBytes) return tooLarge();
  const chunked = request.headers["transfer-encoding"] !== undefined;
  const reservation = await budget?.reserve(chunked ? maxBodyBytes : declared);
  try {
    return await readAndParse(request);
  } finally {
    reservation?.release();
  }
}

async function readAndParse(request: IncomingMessage): Promise<{ body: unknown } | Refusal> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBodyBytes) return tooLarge();
    chunks.push(chunk as Buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return { status: 400, message: "parse error: the body is not JSON" };
  }
  if (Array.isArray(body) && body.length > maxBatchMessages) {
    return {
      status: 400,
      message: `a JSON-RPC batch of ${body.length} messages: this server takes at most ${maxBatchMessages} per request`,
    };
  }
  return { body };
}

function tooLarge(): Refusal {
  return { status: 413, message: `the request body is over ${maxBodyBytes} bytes` };
}
