import type { IncomingMessage } from "node:http";
import { secretMatcher } from "../../listener/http-token.ts";
import { allowedHostnames, checkRequest, type Refusal } from "../../listener/request-checks.ts";

/**
 * The cookie the page carries after its first visit (`?token=` or a login nonce), named by the
 * desk's port: cookies do not tell ports apart, and two desks on one machine must not send each
 * other's token.
 */
export function tokenCookie(port: number): string {
  return `codeaction_desk_${port}`;
}

/** The header the page sends its own token in: the desk gave it in the page, which no other origin can read. */
export const pageTokenHeader = "x-codeaction-page";

/** What the page loads by itself (navigation, <img>, <a download>): the cookie is enough for these reads. */
function loadedByThePage(path: string): boolean {
  return path === "/" || path === "/desk.js" || path === "/desk.css" || path.startsWith("/out/");
}

/**
 * The desk's checks, in order (a refusal is 403 or 401):
 * - Host names this desk's address (or localhost) and its port; an Origin, when sent, is exactly
 *   `http://<that name>:<port>` (request-checks.ts): another port of 127.0.0.1 is another origin;
 * - `Sec-Fetch-Site`, when the browser sends it, is `same-origin` (or `none`, a typed address, for
 *   a read): a page of another port is `same-site` and is refused;
 * - the credential: `Authorization: Bearer <token>` (scripts), or the HttpOnly cookie, which is
 *   enough only for what the page loads by itself (GET of the page, its assets and the files of
 *   runs); every API call also carries the page's own token in `X-Codeaction-Page`. The cookie is
 *   sent by the browser wherever a request comes from; the page token only by the desk's page.
 * GET / with `?token=` (the address printed) or `?login=` (a nonce, checked by the route) passes.
 */
export function deskChecker(options: { host: string; token: string; pageToken: string; port: () => number }) {
  const hostnames = allowedHostnames(options.host);
  const sessionMatches = secretMatcher(options.token);
  const pageMatches = secretMatcher(options.pageToken);
  return (request: IncomingMessage): Refusal | undefined => {
    const port = options.port();
    const refusal = checkRequest(request, { hostnames, port, tokenMatches: () => true });
    if (refusal) return refusal;
    const reading = request.method === "GET" || request.method === "HEAD";
    const site = request.headers["sec-fetch-site"];
    if (site !== undefined && site !== "same-origin" && !(site === "none" && reading)) {
      return {
        status: 403,
        message: `forbidden: a request from another site or port (Sec-Fetch-Site: ${site}); use the desk's own page`,
      };
    }
    const url = new URL(request.url ?? "/", "http://localhost");
    const bearer = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? "")?.[1];
    if (bearer !== undefined && sessionMatches(bearer)) return undefined;
    if (reading && url.pathname === "/") {
      if (url.searchParams.has("login")) return undefined;
      const given = url.searchParams.get("token");
      if (given !== null && sessionMatches(given)) return undefined;
    }
    const cookie = cookieValue(request, tokenCookie(port));
    if (cookie !== undefined && sessionMatches(cookie)) {
      if (reading && loadedByThePage(url.pathname)) return undefined;
      const pageToken = request.headers[pageTokenHeader];
      if (typeof pageToken === "string" && pageMatches(pageToken)) return undefined;
      return {
        status: 401,
        message: `unauthorized: the request lacks the page's token (${pageTokenHeader}); reload the desk's page`,
      };
    }
    return {
      status: 401,
      message: "unauthorized: open the desk with the address codeaction desk printed (it carries ?token=)",
    };
  };
}

function cookieValue(request: IncomingMessage, name: string): string | undefined {
  const cookie = (request.headers.cookie ?? "")
    .split(";")
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${name}=`));
  return cookie?.slice(name.length + 1);
}

/** The headers of every answer: a strict CSP (no inline script, nothing from elsewhere). */
export const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
} as const;

/**
 * The headers of a file a run wrote: it is never run as the desk's page. Served as an attachment
 * (a navigation downloads it), in a sandbox with nothing allowed (were it ever shown, it would be
 * an opaque origin with no script, no request, no cookie), never sniffed, and loadable only by the
 * desk's own origin (an <img> of another port's page gets nothing).
 */
export function outputFileHeaders(name: string): Record<string, string> {
  return {
    "content-security-policy": "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-origin",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "content-disposition": `attachment; filename="${name}"`,
  };
}
