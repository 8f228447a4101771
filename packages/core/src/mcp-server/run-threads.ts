import { randomBytes } from "node:crypto";

// run_program's `thread`: a client's name for a live interpreter kept between its calls. The runner
// keys threads by the connection as well (its MCP session, or "local" over stdio and stateless
// HTTP). Over stdio a server serves one client; over stateless HTTP every client holds the server's
// one token and names are shared among them, so `new` makes a thread whose id only its maker knows.

/** What a client may call a thread. */
export const threadNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The runner's key for a client's thread name. */
export function runnerThreadKey(sessionId: string | undefined, name: string): string {
  return `${sessionId ?? "local"}:${name}`;
}

/** The client's name back from the runner's key. */
export function clientThreadName(key: string): string {
  return key.slice(key.indexOf(":") + 1);
}

/**
 * The name a client sends for a thread of its own: the server makes one with an unguessable id (128
 * random bits, returned as the result's thread.id), so that over stateless HTTP, where every client
 * holds the same token, no other client can reach it without being told its id.
 */
export const newThreadName = "new";

/** The thread a call names: undefined for none, its key, or why the name is refused. */
export function threadOf(
  args: Record<string, unknown> | undefined,
  sessionId: string | undefined,
): { key?: string } | { refusal: string } {
  const name = args?.thread;
  if (name === undefined) return {};
  if (typeof name !== "string" || !threadNamePattern.test(name)) {
    return {
      refusal: `run_program's thread must be 1 to 64 letters, digits and . _ - (starting with a letter or digit), got ${JSON.stringify(name)?.slice(0, 80)}`,
    };
  }
  const id = name === newThreadName ? `t-${randomBytes(16).toString("base64url")}` : name;
  return { key: runnerThreadKey(sessionId, id) };
}
