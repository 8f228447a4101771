import type { IncomingMessage } from "node:http";
import { bearerChecker } from "../mcp-server/http-token.ts";
import { allowedHostnames, checkRequest, type Refusal } from "../mcp-server/request-checks.ts";

/**
 * The cookie the page carries after its first visit with `?token=`, named by the desk's port:
 * cookies do not tell ports apart, and two desks on one machine must not send each other's token.
 */
export function tokenCookie(port: number): string {
  return `codeaction_desk_${port}`;
}

/**
 * The desk's checks, the same rules as `codeaction mcp --http` (request-checks.ts): a foreign Host
 * or Origin is 403, a missing or wrong token 401. The token comes as the HttpOnly cookie, as
 * `Authorization: Bearer`, or (the first visit only, on GET /) as `?token=`.
 */
export function deskChecker(options: { host: string; token: string; port: () => number }) {
  const hostnames = allowedHostnames(options.host);
  const bearerMatches = bearerChecker(options.token);
  return (request: IncomingMessage): Refusal | undefined => {
    const given = tokenOf(request, tokenCookie(options.port()));
    const refusal = checkRequest(request, {
      hostnames,
      tokenMatches: () => bearerMatches(`Bearer ${given}`),
    });
    if (refusal?.status === 401) {
      return {
        status: 401,
        message: "unauthorized: open the desk with the address codeaction desk printed (it carries ?token=)",
      };
    }
    return refusal;
  };
}

/** The token a request carries: the cookie, the Authorization header, or ?token= on the page itself. */
function tokenOf(request: IncomingMessage, cookieName: string): string {
  const cookie = (request.headers.cookie ?? "")
    .split(";")
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${cookieName}=`));
  if (cookie) return cookie.slice(cookieName.length + 1);
  const bearer = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "");
  if (bearer?.[1]) return bearer[1];
  const url = new URL(request.url ?? "/", "http://localhost");
  if (request.method === "GET" && url.pathname === "/") return url.searchParams.get("token") ?? "";
  return "";
}

/** The headers of every answer: a strict CSP (no inline script, nothing from elsewhere). */
export const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
} as const;
