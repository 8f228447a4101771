import { isIP } from "node:net";
import type { NetworkPolicy } from "./network-policy.ts";

/**
 * Addresses no request may reach after resolution unless the name was pinned by the owner:
 * "this network", loopback, private (RFC 1918), carrier-grade NAT, link-local (cloud metadata at
 * 169.254.169.254 included), IETF protocol assignments, benchmarking (where the sandbox networks
 * live), multicast and reserved; for IPv6 unspecified, loopback, unique-local (fd00:ec2::254
 * included), link-local and multicast.
 */
export const forbiddenDestinations: readonly string[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
  "::/128",
  "::1/128",
  "fc00::/7",
  "fe80::/10",
  "ff00::/8",
];

/** The access log format: time, client address, squid result, HTTP status, method, server address, URL. */
export const accessLogFormat = "%ts.%03tu %>a %Ss %>Hs %rm %<a %ru";

export type SquidConfigOptions = {
  policy: NetworkPolicy;
  /** The only client addresses served (the sandbox networks), CIDR. */
  clientNetworks: string[];
  /** Port squid listens on. */
  port: number;
  /** Folder of the tmpfs squid writes its runtime files to. */
  runtimeDirectory: string;
  /**
   * Test only: names written into squid's hosts file WITHOUT pinning them, so they are still
   * subject to the address denial (how tests show that a name resolving to a private address
   * is refused without any real DNS).
   */
  unpinnedResolutions?: Record<string, string>;
};

/** One `acl` line per value list; squid reads long lists fine but short lines read better in a diff. */
function aclLines(name: string, type: string, values: readonly string[]): string[] {
  const lines: string[] = [];
  for (let index = 0; index < values.length; index += 8) {
    lines.push(`acl ${name} ${type} ${values.slice(index, index + 8).join(" ")}`);
  }
  return lines;
}

function assertSafeToken(value: string, what: string): void {
  // Everything rendered into the config was validated already; this keeps a bug from becoming an injection.
  if (!/^[a-z0-9.:/_-]+$/i.test(value))
    throw new Error(`refusing to render ${what} ${JSON.stringify(value)} into squid.conf`);
}

/**
 * Renders squid.conf for an allow-list. Order of the rules:
 * 1. only the sandbox networks are served; CONNECT only to 443, plain HTTP only to 80;
 * 2. pinned names and listed raw addresses are allowed (the owner chose them);
 * 3. anything else not on the list is refused (raw IP literals included: `dstdomain -n` never
 *    looks an address up);
 * 4. a listed name is refused when any address it resolves to is forbidden, else allowed.
 */
export function renderSquidConfig(options: SquidConfigOptions): string {
  const { policy } = options;
  const names = [...policy.names, ...policy.suffixes.map((suffix) => `.${suffix}`)];
  const pinned = Object.keys(policy.hosts).sort();
  for (const value of [...names, ...pinned, ...policy.addresses, ...options.clientNetworks]) {
    assertSafeToken(value, "the value");
  }
  assertSafeToken(options.runtimeDirectory.replaceAll("/", ""), "the folder");
  const runtime = options.runtimeDirectory;
  const lines = [
    "# Rendered by @codeaction/sandbox (src/network/squid-config.ts). Do not edit: it is rewritten at every start.",
    `http_port ${options.port}`,
    `pid_filename ${runtime}/squid.pid`,
    `hosts_file ${runtime}/hosts`,
    `coredump_dir ${runtime}`,
    "cache deny all",
    "cache_mem 0 MB",
    "netdb_filename none",
    "pinger_enable off",
    "logfile_rotate 0",
    `logformat codeaction ${accessLogFormat}`,
    "access_log stdio:/dev/stdout codeaction",
    "cache_log /dev/stderr",
    "max_filedescriptors 4096",
    "shutdown_lifetime 1 seconds",
    "connect_timeout 15 seconds",
    "via off",
    "forwarded_for delete",
    "httpd_suppress_version_string on",
    "",
    ...aclLines("sandboxes", "src", options.clientNetworks),
    "acl CONNECT method CONNECT",
    "acl connect_ports port 443",
    "acl http_ports port 80",
    ...aclLines("forbidden_destinations", "dst", forbiddenDestinations),
    ...(names.length > 0 ? aclLines("allowed_names", "dstdomain -n", names) : []),
    ...(pinned.length > 0 ? aclLines("pinned_names", "dstdomain -n", pinned) : []),
    ...(policy.addresses.length > 0 ? aclLines("listed_addresses", "dstdomain -n", policy.addresses) : []),
    "",
    "http_access deny !sandboxes",
    "http_access deny CONNECT !connect_ports",
    "http_access deny !CONNECT !http_ports",
    ...(pinned.length > 0 ? ["http_access allow pinned_names"] : []),
    ...(policy.addresses.length > 0 ? ["http_access allow listed_addresses"] : []),
    ...(names.length > 0
      ? [
          "http_access deny !allowed_names",
          "http_access deny forbidden_destinations",
          "http_access allow allowed_names",
        ]
      : []),
    "http_access deny all",
    "http_reply_access allow all",
    "icp_access deny all",
    "htcp_access deny all",
    "",
  ];
  return lines.join("\n");
}

/** squid's hosts file: the pinned names, then (tests only) the unpinned resolutions. */
export function renderSquidHosts(
  options: Pick<SquidConfigOptions, "policy" | "unpinnedResolutions">,
): string {
  const entries = [
    ...Object.entries(options.policy.hosts),
    ...Object.entries(options.unpinnedResolutions ?? {}),
  ];
  return entries
    .map(([name, address]) => {
      assertSafeToken(name, "the name");
      if (!isIP(address))
        throw new Error(`refusing to render ${JSON.stringify(address)} into squid's hosts file`);
      return `${address} ${name}`;
    })
    .join("\n");
}
