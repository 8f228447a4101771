/** A request id: what a stub may name its request file. Anything else is refused. */
export const requestIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** How deep the arguments of one call may nest. */
export const maxArgumentDepth = 64;

export type ToolRequest = { tool: string; args: Record<string, unknown> };

/**
 * Parses the bytes of a request file: UTF-8 JSON `{"id", "tool", "args"}` whose id matches the one
 * the doorbell rang, a string tool name and an object of arguments nested at most 64 deep.
 * Returns the request or the reason it is refused (the program sees that reason).
 */
export function parseToolRequest(
  id: string,
  body: Buffer,
  options: { maxBytes: number },
): { ok: true; request: ToolRequest } | { ok: false; reason: string; tool?: string } {
  if (body.length > options.maxBytes) {
    return {
      ok: false,
      reason: `the request is larger than ${options.maxBytes} bytes (it is ${body.length} bytes; the limit is codeAction.maxRequestBytes)`,
    };
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    return { ok: false, reason: `the request is not valid JSON (${(error as Error).message})` };
  }
  if (!isObject(value)) return { ok: false, reason: "the request is not a JSON object" };
  const tool = typeof value.tool === "string" ? value.tool.slice(0, 200) : undefined;
  if (value.id !== id) return { ok: false, reason: "the request's id does not match its file name", tool };
  if (tool === undefined) return { ok: false, reason: "the request has no tool name" };
  if (!isObject(value.args)) return { ok: false, reason: "the arguments must be a JSON object", tool };
  if (depthExceeds(value.args, maxArgumentDepth)) {
    return { ok: false, reason: `the arguments are nested deeper than ${maxArgumentDepth} levels`, tool };
  }
  return { ok: true, request: { tool, args: value.args } };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True when `value` nests deeper than `limit`; iterative, so hostile depth cannot overflow the stack. */
function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value !== "object" || item.value === null) continue;
    if (item.depth > limit) return true;
    for (const child of Object.values(item.value)) stack.push({ value: child, depth: item.depth + 1 });
  }
  return false;
}

/** What the host reckons one parsed JSON value takes (an object, array, number or string, with its slot). */
export const parsedValueBytes = 48;

/**
 * What a request would take on the host once parsed, reckoned from its bytes without parsing: its
 * text plus `parsedValueBytes` for every value in it (each `{`, `[` and `,` outside strings starts
 * one). `[{}] * 262000` is 1 MiB of text and about 25 MiB of objects.
 */
export function parsedSizeEstimate(body: Buffer): { values: number; bytes: number } {
  let values = 1;
  let inString = false;
  for (let index = 0; index < body.length; index += 1) {
    const byte = body[index];
    if (inString) {
      if (byte === 0x5c) index += 1;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) {
      inString = true;
    } else if (byte === 0x7b || byte === 0x5b || byte === 0x2c) {
      values += 1;
    }
  }
  return { values, bytes: body.length + values * parsedValueBytes };
}
