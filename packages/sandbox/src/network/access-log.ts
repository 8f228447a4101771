/** One line of the proxy's access log (format: squid-config.ts `accessLogFormat`). */
export type EgressLogEntry = {
  /** Milliseconds since the epoch. */
  time: number;
  /** The sandbox address the request came from. */
  client: string;
  /** squid's result code, for example TCP_TUNNEL, TCP_MISS, TCP_DENIED. */
  result: string;
  status: number;
  method: string;
  /** The address squid connected to, undefined when it connected nowhere. */
  server: string | undefined;
  url: string;
  /** The host name (or address) asked for. */
  host: string;
  /** "refused" when the proxy's rules denied it; "allowed" otherwise (even if the server then failed). */
  decision: "allowed" | "refused";
};

function hostOf(method: string, url: string): string {
  if (method === "CONNECT") {
    const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(url);
    if (bracketed) return bracketed[1]!.toLowerCase();
    return url.replace(/:\d+$/, "").toLowerCase();
  }
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return url.toLowerCase();
  }
}

/** Parses one access log line; undefined for anything else (squid's notices, blank lines). */
export function parseAccessLogLine(line: string): EgressLogEntry | undefined {
  const match = /^(\d+\.\d+) (\S+) (\S+) (\d{3}) (\S+) (\S+) (\S+)$/.exec(line.trim());
  if (!match) return undefined;
  const [, time, client, result, status, method, server, url] = match as unknown as string[];
  const resultCode = result!.split("/")[0]!;
  return {
    time: Math.round(Number(time) * 1000),
    client: client!,
    result: resultCode,
    status: Number(status),
    method: method!,
    server: server === "-" ? undefined : server,
    url: url!,
    host: hostOf(method!, url!),
    decision: resultCode.includes("DENIED") ? "refused" : "allowed",
  };
}
