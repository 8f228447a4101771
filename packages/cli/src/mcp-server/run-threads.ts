// run_program's `thread`: a client's name for a live interpreter kept between its calls. The runner
// keys threads by the connection as well (its MCP session, or "local" over stdio and stateless
// HTTP, where every client holds the server's one token), so one client never reaches another's.

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
  return { key: runnerThreadKey(sessionId, name) };
}
