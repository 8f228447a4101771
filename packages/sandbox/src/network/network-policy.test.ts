import { describe, expect, it } from "vitest";
import { SandboxConfigError } from "../errors/sandbox-config-error.ts";
import {
  needsEgressProxy,
  networkPolicyProblems,
  resolveNetworkPolicy,
  restrictedPreset,
} from "./network-policy.ts";

describe("resolveNetworkPolicy", () => {
  it("gives no policy for none and full, and the PyPI preset for restricted", () => {
    expect(resolveNetworkPolicy("none")).toBeUndefined();
    expect(resolveNetworkPolicy("full")).toBeUndefined();
    expect(resolveNetworkPolicy("restricted")).toEqual({
      names: ["files.pythonhosted.org", "pypi.org"],
      suffixes: [],
      addresses: [],
      hosts: {},
    });
    expect(restrictedPreset).toEqual(["pypi.org", "files.pythonhosted.org"]);
    expect(needsEgressProxy("none")).toBe(false);
    expect(needsEgressProxy("full")).toBe(false);
    expect(needsEgressProxy("restricted")).toBe(true);
    expect(needsEgressProxy({ allow: [] })).toBe(true);
  });

  it("normalizes names, wildcards, addresses and pins", () => {
    const policy = resolveNetworkPolicy({
      allow: ["PyPI.org.", "*.Example.org", "api.example.org", "192.0.2.1", "[2001:db8::1]", "pypi.org"],
      hosts: { "Files.Test.Invalid": "192.0.2.7" },
    });
    expect(policy).toEqual({
      names: ["pypi.org"],
      suffixes: ["example.org"],
      addresses: ["192.0.2.1", "2001:db8::1"],
      hosts: { "files.test.invalid": "192.0.2.7" },
    });
  });

  it("drops a wildcard covered by a wider one", () => {
    expect(resolveNetworkPolicy({ allow: ["*.a.example.org", "*.example.org"] })?.suffixes).toEqual([
      "example.org",
    ]);
  });

  it("refuses URLs, ports, bare and inner wildcards, whole top-level domains and bad pins, naming each", () => {
    const setting = {
      allow: ["https://pypi.org/simple", "pypi.org:443", "*", "*.org", "a.*.org", "bad_name.org"],
      hosts: { "*.x.org": "192.0.2.1", "ok.example": "not-an-address" },
    };
    const problems = networkPolicyProblems(setting);
    expect(problems).toHaveLength(8);
    expect(problems[0]).toMatch(/is a URL; list the host name only/);
    expect(problems[1]).toMatch(/has a port/);
    expect(problems[2]).toMatch(/would allow everything; use network "full"/);
    expect(problems[3]).toMatch(/whole top-level domain/);
    expect(problems[4]).toMatch(/only allowed as a leading/);
    expect(problems[5]).toMatch(/not a valid host name/);
    expect(problems[6]).toMatch(/must be a plain host name/);
    expect(problems[7]).toMatch(/must map to an IP address/);
    expect(() => resolveNetworkPolicy(setting)).toThrow(SandboxConfigError);
  });
});
