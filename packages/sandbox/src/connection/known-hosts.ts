import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";

/** What known_hosts says about one host key: trusted, unknown host, or a different (changed) key. */
export type HostKeyVerdict = "trusted" | "unknown" | "changed";

/** The name OpenSSH writes for a host: `host` on port 22, `[host]:port` otherwise. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern.startsWith("|1|")) {
    const [, , salt, hash] = pattern.split("|");
    if (!salt || !hash) return false;
    return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
  }
  const expression = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "i",
  );
  return expression.test(name);
}

/** Whether `hosts` (a comma-separated known_hosts field) names `name`: any match, and no negated (!) match. */
function hostsFieldMatches(hosts: string, name: string): boolean {
  let matched = false;
  for (const pattern of hosts.split(",")) {
    if (pattern.startsWith("!")) {
      if (patternMatches(pattern.slice(1), name)) return false;
    } else if (patternMatches(pattern, name)) matched = true;
  }
  return matched;
}

/**
 * Checks a host key (the raw key blob the server sent) against a known_hosts file, as ssh's
 * StrictHostKeyChecking=yes does: only a listed key is trusted; @revoked keys never are.
 */
export function checkHostKey(options: {
  knownHostsFile: string;
  host: string;
  port: number;
  key: Buffer;
}): HostKeyVerdict {
  let text: string;
  try {
    text = readFileSync(options.knownHostsFile, "utf8");
  } catch {
    return "unknown";
  }
  const name = knownHostsName(options.host, options.port);
  const offered = options.key.toString("base64");
  let hostListed = false;
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const fields = line.split(/\s+/);
    const marker = fields[0]?.startsWith("@") ? fields.shift() : undefined;
    const [hosts, , keyBase64] = fields;
    if (!hosts || !keyBase64 || !hostsFieldMatches(hosts, name)) continue;
    if (marker === "@revoked" && keyBase64 === offered) return "changed";
    if (marker !== undefined) continue;
    hostListed = true;
    if (keyBase64 === offered) return "trusted";
  }
  return hostListed ? "changed" : "unknown";
}
