import { describe, expect, it } from "vitest";
import { resolveNetworkPolicy } from "./network-policy.ts";
import { forbiddenDestinations, renderSquidConfig, renderSquidHosts } from "./squid-config.ts";

const base = { clientNetworks: ["198.18.0.0/15"], port: 3128, runtimeDirectory: "/run/squid" };

function accessRules(config: string): string[] {
  return config.split("\n").filter((line) => line.startsWith("http_access "));
}

describe("renderSquidConfig", () => {
  it("allows listed names and suffixes, pins first, and denies forbidden addresses for the rest", () => {
    const policy = resolveNetworkPolicy({
      allow: ["pypi.org", "*.example.org", "192.0.2.1"],
      hosts: { "files.test.invalid": "10.1.2.3" },
    });
    const config = renderSquidConfig({ ...base, policy: policy! });
    expect(config).toContain("acl allowed_names dstdomain -n pypi.org .example.org");
    expect(config).toContain("acl pinned_names dstdomain -n files.test.invalid");
    expect(config).toContain("acl listed_addresses dstdomain -n 192.0.2.1");
    expect(config).toContain("acl sandboxes src 198.18.0.0/15");
    expect(accessRules(config)).toEqual([
      "http_access deny !sandboxes",
      "http_access deny CONNECT !connect_ports",
      "http_access deny !CONNECT !http_ports",
      "http_access allow pinned_names",
      "http_access allow listed_addresses",
      "http_access deny !allowed_names",
      "http_access deny forbidden_destinations",
      "http_access allow allowed_names",
      "http_access deny all",
    ]);
  });

  it("denies loopback, private, CGNAT, link-local (metadata), multicast and unique-local addresses", () => {
    const config = renderSquidConfig({ ...base, policy: resolveNetworkPolicy("restricted")! });
    const denied = config
      .split("\n")
      .filter((line) => line.startsWith("acl forbidden_destinations dst "))
      .flatMap((line) => line.split(" ").slice(3));
    expect(denied).toEqual([...forbiddenDestinations]);
    for (const range of ["127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"]) {
      expect(denied).toContain(range);
    }
    for (const range of ["100.64.0.0/10", "224.0.0.0/4", "fc00::/7", "fe80::/10", "::1/128"]) {
      expect(denied).toContain(range);
    }
  });

  it("logs to stdout in the parsed format, keeps no cache and strips the client's identity", () => {
    const config = renderSquidConfig({ ...base, policy: resolveNetworkPolicy("restricted")! });
    expect(config).toContain("access_log stdio:/dev/stdout codeaction");
    expect(config).toContain("cache deny all");
    expect(config).toContain("forwarded_for delete");
    expect(config).toContain("via off");
    expect(config).toContain("http_port 3128");
    expect(config).toContain("hosts_file /run/squid/hosts");
  });

  it("with an empty list refuses everything but pins", () => {
    const config = renderSquidConfig({ ...base, policy: resolveNetworkPolicy({ allow: [] })! });
    expect(config).not.toContain("allowed_names");
    expect(accessRules(config).at(-1)).toBe("http_access deny all");
    expect(accessRules(config).filter((rule) => rule.includes("allow"))).toEqual([]);
  });

  it("refuses to render a value that could inject a directive", () => {
    const policy = { names: ["pypi.org\nhttp_access allow all"], suffixes: [], addresses: [], hosts: {} };
    expect(() => renderSquidConfig({ ...base, policy })).toThrow(/refusing to render/);
  });
});

describe("renderSquidHosts", () => {
  it("writes pins and test-only resolutions, and refuses non-addresses", () => {
    const policy = resolveNetworkPolicy({ allow: [], hosts: { "pkg.internal": "10.1.2.3" } })!;
    expect(renderSquidHosts({ policy, unpinnedResolutions: { "loop.test.invalid": "127.0.0.1" } })).toBe(
      "10.1.2.3 pkg.internal\n127.0.0.1 loop.test.invalid",
    );
    expect(() => renderSquidHosts({ policy, unpinnedResolutions: { "x.invalid": "nowhere" } })).toThrow();
  });
});
