import { isIP } from "node:net";
import type { NetworkSetting } from "../config.ts";
import { SandboxConfigError } from "../errors/sandbox-config-error.ts";

/** What `network: "restricted"` allows: Python package installs (PyPI's index and its file host). */
export const restrictedPreset: readonly string[] = ["pypi.org", "files.pythonhosted.org"];

/**
 * A normalized allow-list. `names` are lower-case host names, `suffixes` the part after `*.` of
 * wildcard entries (matching the name itself and every name below it), `addresses` raw IP literals
 * the owner listed, `hosts` names pinned to addresses (a pinned name is allowed, and may be private).
 */
export type NetworkPolicy = {
  names: string[];
  suffixes: string[];
  addresses: string[];
  hosts: Record<string, string>;
};

/** Whether a network setting needs the egress proxy ("restricted" or an allow-list). */
export function needsEgressProxy(setting: NetworkSetting): boolean {
  return setting !== "none" && setting !== "full";
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(value: string): boolean {
  return value.length <= 253 && value.split(".").every((part) => label.test(part));
}

/** Lower case, no surrounding spaces, no trailing root dot. */
function normalize(value: string): string {
  return value.trim().toLowerCase().replace(/\.$/, "");
}

function stripBrackets(value: string): string {
  return value.startsWith("[") && value.endsWith("]") ? value.slice(1, -1) : value;
}

/** The problems with one allow-list entry, with the fix; empty when it is valid. */
function entryProblem(entry: string): string | undefined {
  const value = normalize(entry);
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(value) || value.includes("/")) {
    return `network.allow: ${JSON.stringify(entry)} is a URL; list the host name only (for example "pypi.org")`;
  }
  if (isIP(stripBrackets(value))) return undefined;
  if (/:\d+$/.test(value)) {
    return `network.allow: ${JSON.stringify(entry)} has a port; list the host name only (ports 80 and 443 are allowed)`;
  }
  if (value === "*" || value === "*.") {
    return `network.allow: ${JSON.stringify(entry)} would allow everything; use network "full" if that is what you want`;
  }
  if (value.startsWith("*.")) {
    const suffix = value.slice(2);
    if (!suffix.includes(".")) {
      return `network.allow: ${JSON.stringify(entry)} covers a whole top-level domain; name a domain such as "*.example.org"`;
    }
    return isHostName(suffix)
      ? undefined
      : `network.allow: ${JSON.stringify(entry)} is not a valid wildcard name`;
  }
  if (value.includes("*")) {
    return `network.allow: ${JSON.stringify(entry)}: a wildcard is only allowed as a leading "*." (for example "*.example.org")`;
  }
  return isHostName(value) ? undefined : `network.allow: ${JSON.stringify(entry)} is not a valid host name`;
}

/** Every problem with an allow-list setting; empty for valid settings and for "none", "full" and "restricted". */
export function networkPolicyProblems(setting: NetworkSetting): string[] {
  if (typeof setting === "string") return [];
  const problems: string[] = [];
  for (const entry of setting.allow) {
    const problem = entryProblem(entry);
    if (problem) problems.push(problem);
  }
  for (const [name, address] of Object.entries(setting.hosts ?? {})) {
    const lower = normalize(name);
    if (lower.includes("*") || isIP(stripBrackets(lower)) || !isHostName(lower)) {
      problems.push(
        `network.hosts: ${JSON.stringify(name)} must be a plain host name (no wildcard, no address)`,
      );
    }
    if (!isIP(stripBrackets(address.trim()))) {
      problems.push(
        `network.hosts: ${JSON.stringify(name)} must map to an IP address, got ${JSON.stringify(address)}`,
      );
    }
  }
  return problems;
}

/**
 * The allow-list a network setting stands for: the preset for "restricted", the normalized list for
 * `{ allow, hosts }`, undefined for "none" and "full" (no proxy). Throws SandboxConfigError naming
 * every bad entry. Pinned names are allowed whether or not they are also listed.
 */
export function resolveNetworkPolicy(setting: NetworkSetting): NetworkPolicy | undefined {
  if (setting === "none" || setting === "full") return undefined;
  const problems = networkPolicyProblems(setting);
  if (problems.length > 0) throw new SandboxConfigError({ issues: problems });
  const entries = setting === "restricted" ? restrictedPreset : setting.allow;
  const hosts: Record<string, string> = {};
  if (typeof setting !== "string") {
    for (const [name, address] of Object.entries(setting.hosts ?? {})) {
      hosts[normalize(name)] = stripBrackets(address.trim().toLowerCase());
    }
  }
  const names = new Set<string>();
  const suffixes = new Set<string>();
  const addresses = new Set<string>();
  for (const entry of entries) {
    const value = normalize(entry);
    if (isIP(stripBrackets(value))) addresses.add(stripBrackets(value));
    else if (value.startsWith("*.")) suffixes.add(value.slice(2));
    else names.add(value);
  }
  // A name under a listed suffix is already covered (squid warns about such overlaps).
  const coveredBy = (name: string, own?: string) =>
    [...suffixes].some((suffix) => suffix !== own && (name === suffix || name.endsWith(`.${suffix}`)));
  return {
    names: [...names].filter((name) => !coveredBy(name)).sort(),
    suffixes: [...suffixes].filter((suffix) => !coveredBy(suffix, suffix)).sort(),
    addresses: [...addresses].sort(),
    hosts,
  };
}
