import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";

/** The names every listener answers to, whatever its bind: this machine's loopback. */
const localhostNames = ["localhost", "127.0.0.1", "[::1]"];

/** Why a request is refused before it reaches MCP: the status, a message and any headers. */
export type Refusal = { status: number; message: string; headers?: Record<string, string> };

/** True for an address only this machine can reach: 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "localhost" || bare === "::1") return true;
  return isIP(bare) === 4 && bare.startsWith("127.");
}

/**
 * The host names a request's Host (and Origin, when sent) may carry: the bound address, the
 * localhost names and, for a wildcard bind (0.0.0.0, ::), every address of this machine's
 * interfaces. Any other name is a page reached through DNS rebinding, or a proxy nobody set up.
 */
export function allowedHostnames(boundHost: string): Set<string> {
  const names = new Set(localhostNames);
  names.add(hostnameForm(boundHost));
  const bare = boundHost.replace(/^\[|\]$/g, "");
  if (bare === "0.0.0.0" || bare === "::") {
    for (const addresses of Object.values(networkInterfaces())) {
      for (const address of addresses ?? []) names.add(hostnameForm(address.address));
    }
  }
  return names;
}

/** An address as URL.hostname writes it: IPv6 in brackets, lower case. */
function hostnameForm(host: string): string {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

/**
 * Host, Origin and the bearer token, in that order: a foreign Host or Origin is 403 (token or
 * not), a missing or wrong token 401 with a WWW-Authenticate challenge.
 */
export function checkRequest(
  request: IncomingMessage,
  options: {
    hostnames: Set<string>;
    tokenMatches: (authorization: string | undefined) => boolean;
    /**
     * The port the server listens on: when given, Host must name it and Origin must be exactly
     * `http://<allowed name>:<port>` (scheme, host and port): a page on another port of the same
     * host is another origin.
     */
    port?: number;
  },
): Refusal | undefined {
  const host = request.headers.host;
  const hostUrl = parsedUrl(`http://${host}`);
  if (
    host === undefined ||
    !hostUrl ||
    !options.hostnames.has(hostUrl.hostname) ||
    (options.port !== undefined && portOf(hostUrl) !== options.port)
  ) {
    return {
      status: 403,
      message: "forbidden: the Host header must name this server's address (or localhost) and port",
    };
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !originAllowed(origin, options)) {
    return { status: 403, message: "forbidden: requests from another origin (a web page) are refused" };
  }
  if (!options.tokenMatches(request.headers.authorization)) {
    return {
      status: 401,
      message:
        "unauthorized: send the server's token as `Authorization: Bearer <token>` (codeaction mcp printed it and wrote it to a file when it started)",
      headers: { "www-authenticate": 'Bearer realm="codeaction mcp"' },
    };
  }
  return undefined;
}

/** An Origin of one of the allowed names and, when a port is given, exactly http:// and that port. */
function originAllowed(origin: string, options: { hostnames: Set<string>; port?: number }): boolean {
  const url = parsedUrl(origin);
  if (!url || !options.hostnames.has(url.hostname)) return false;
  if (options.port === undefined) return true;
  return url.protocol === "http:" && portOf(url) === options.port && url.origin === origin;
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** The URL's port, its scheme's default when it names none. */
function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}
