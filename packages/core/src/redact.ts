/** What a secret is replaced with in a record. */
export const redactedText = "[redacted]";

// scheme://[userinfo@]host[path][?query][#fragment], up to whitespace or a quote.
const urlPattern = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#'"<>]*)([^\s?#'"<>]*)([?#][^\s'"<>]*)?/gi;
// NAME=value at the start of a command line or after a separator: an environment assignment.
const assignmentPattern = /(^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|[^\s;&|)]*)/g;
// --token=x, --api-key x, -password x: an option whose name says it holds a secret.
const secretOptionPattern =
  /(^|\s)(--?[A-Za-z0-9_-]*(?:token|secret|passw(?:or)?d|api[-_]?key|auth)[A-Za-z0-9_-]*)(=|\s+)("(?:[^"\\]|\\.)*"|'[^']*'|\S+)/gi;
const bearerPattern = /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

/**
 * A URL's credentials, query string and fragment replaced: `https://user:key@host/v1?key=x` becomes
 * `https://[redacted]@host/v1?[redacted]`. Every URL in `text` is rewritten; the rest is kept.
 */
export function redactUrls(text: string): string {
  return text.replace(
    urlPattern,
    (_match, scheme: string, authority: string, path: string, rest?: string) => {
      const at = authority.lastIndexOf("@");
      const host = at === -1 ? authority : `${redactedText}@${authority.slice(at + 1)}`;
      return `${scheme}${host}${path}${rest ? `${rest[0]}${redactedText}` : ""}`;
    },
  );
}

/**
 * A command line, URL or message with its secrets replaced: environment assignments
 * (`GITHUB_TOKEN=ghp_... npx server` keeps `GITHUB_TOKEN=[redacted] npx server`), options named
 * like a secret (`--api-key X`), bearer and basic credentials, and every URL's credentials, query
 * string and fragment. What is kept still says which server or endpoint it was.
 */
export function redactSecrets(text: string): string {
  return redactUrls(text)
    .replace(assignmentPattern, (_match, before: string, name: string) => `${before}${name}=${redactedText}`)
    .replace(
      secretOptionPattern,
      (_match, before: string, name: string, separator: string) =>
        `${before}${name}${separator}${redactedText}`,
    )
    .replace(bearerPattern, (_match, scheme: string) => `${scheme} ${redactedText}`);
}
