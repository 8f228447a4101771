import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { parseSandboxConfig, sandboxOptionNames } from "./config.ts";
import { SandboxConfigError } from "./errors/sandbox-config-error.ts";

function errorOf(input: unknown): SandboxConfigError {
  try {
    parseSandboxConfig(input);
  } catch (error) {
    if (SandboxConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected the settings to be refused");
}

describe("parseSandboxConfig", () => {
  it("fills every default, with network none", () => {
    expect(parseSandboxConfig({})).toEqual({
      backend: "docker",
      image: "codeaction/python:3.11",
      cpuLimit: 2,
      memoryLimit: "4G",
      diskLimit: "1G",
      pidsLimit: 256,
      network: "none",
      persistent: false,
      timeout: 300,
      workdir: "/workspace",
      env: {},
      userRange: { first: 0x7000_0000, count: 2 ** 24 },
      allowSudo: false,
      readOnlyRootfs: true,
      maxOutputBytes: 1048576,
      pool: 0,
      poolIdleSeconds: 300,
      poolCopyLimit: "32M",
      // Two per core, 4 to 16: 4 on 2 cores.
      maxConcurrent: Math.min(16, Math.max(4, 2 * availableParallelism())),
    });
    expect(parseSandboxConfig(undefined).network).toBe("none");
  });

  it("keeps the network closed when only a memory limit is given", () => {
    const config = parseSandboxConfig({ memoryLimit: "512M" });
    expect(config).toMatchObject({ network: "none", pidsLimit: 256, diskLimit: "1G", memoryLimit: "512M" });
  });

  it("refuses network_mode and networkMode with a hint to use 'network', listing the valid options", () => {
    for (const key of ["network_mode", "networkMode"]) {
      const error = errorOf({ [key]: "none" });
      expect(error.code).toBe("sandbox-config");
      expect(error.message).toContain(
        `Invalid sandbox settings: unknown sandbox option '${key}' (use 'network': "none", "full", "restricted" or { allow: [...] }). Valid options:`,
      );
      expect(error.message).toContain(`Valid options: ${sandboxOptionNames.join(", ")}`);
    }
  });

  it("names the camelCase field for snake_case spellings, and suggests near misses", () => {
    expect(errorOf({ memory_limit: "512M" }).message).toContain("'memory_limit' (use 'memoryLimit':");
    expect(errorOf({ read_only_rootfs: true }).message).toContain(
      "'read_only_rootfs' (use 'readOnlyRootfs':",
    );
    expect(errorOf({ memroyLimit: "512M" }).message).toContain(
      "unknown sandbox option 'memroyLimit' (did you mean 'memoryLimit'?). Valid options:",
    );
    expect(errorOf({ timout: 5 }).message).toContain("(did you mean 'timeout'?)");
    expect(errorOf({ banana: 1 }).message).toContain("unknown sandbox option 'banana'. Valid options:");
    // No stray punctuation where a hint ends and the list starts.
    expect(errorOf({ netwrk: "none" }).message).not.toMatch(/\?\.|\.\.|: '/);
  });

  it("refuses out-of-range values with the field name and the range", () => {
    expect(errorOf({ cpuLimit: 0 }).message).toContain("cpuLimit must be between 0.01 and 256");
    expect(errorOf({ pidsLimit: 5 }).message).toContain("pidsLimit must be an integer between 16 and 65536");
    expect(errorOf({ pidsLimit: 100.5 }).message).toContain("pidsLimit");
    expect(errorOf({ memoryLimit: "1K" }).message).toContain("memoryLimit must be between 32M and 1T");
    expect(errorOf({ memoryLimit: "lots" }).message).toContain("memoryLimit must be a size");
    expect(errorOf({ timeout: 0 }).message).toContain("timeout must be between 1 and 86400");
    expect(errorOf({ maxConcurrent: 0 }).message).toContain("maxConcurrent must be an integer of at least 1");
    expect(errorOf({ pool: -1 }).message).toContain("pool must be an integer of at least 0");
    expect(errorOf({ poolIdleSeconds: 0 }).message).toContain(
      "poolIdleSeconds must be between 1 and 86400, got 0",
    );
    expect(errorOf({ poolCopyLimit: "big" }).message).toContain("poolCopyLimit must be a size");
    expect(errorOf({ poolCopyLimit: "2T" }).message).toContain("poolCopyLimit must be between 0 and 1T");
    expect(parseSandboxConfig({ poolCopyLimit: 0 }).poolCopyLimit).toBe(0);
  });

  it("accepts the network forms, including the allow-list that another issue enforces", () => {
    expect(parseSandboxConfig({ network: "full" }).network).toBe("full");
    expect(parseSandboxConfig({ network: "restricted" }).network).toBe("restricted");
    expect(
      parseSandboxConfig({ network: { allow: ["pypi.org"], hosts: { "pypi.org": "192.0.2.1" } } }).network,
    ).toEqual({
      allow: ["pypi.org"],
      hosts: { "pypi.org": "192.0.2.1" },
    });
    expect(errorOf({ network: "bridge" }).message).toContain('network must be "none", "full", "restricted"');
    expect(errorOf({ network: { allow: ["x"], deny: [] } }).issues.length).toBeGreaterThan(0);
  });

  it("checks user, workdir, env and allowSudo", () => {
    expect(parseSandboxConfig({ user: "root" }).user).toBe("root");
    expect(parseSandboxConfig({ user: "1000:1000" }).user).toBe("1000:1000");
    expect(errorOf({ user: "nobody; rm" }).message).toContain("user must be");
    expect(errorOf({ workdir: "/etc" }).message).toContain("workdir must be /workspace, /tmp");
    expect(errorOf({ workdir: "/workspace/../etc" }).message).toContain("workdir");
    expect(errorOf({ env: { "BAD NAME": "x" } }).message).toContain("is not a variable name");
    expect(errorOf({ env: { CODEACTION_EXEC_ID: "x" } }).message).toContain("reserved");
    expect(errorOf({ allowSudo: true }).message).toContain("allowSudo: true is not supported");
  });

  it("refuses what is not an object", () => {
    expect(errorOf("none").message).toContain("must be an object");
    expect(errorOf([1]).message).toContain("must be an object");
  });
});
