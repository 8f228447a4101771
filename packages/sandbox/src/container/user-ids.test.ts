import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../config.ts";
import { SandboxConfigError } from "../errors/sandbox-config-error.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { buildContainerSpec, findSpecProblems } from "./container-spec.ts";
import { allocateIdentity } from "./user-ids.ts";

const uidOf = (user: string | undefined) => Number((user ?? "").split(":")[0]);

function configError(input: unknown): string {
  try {
    parseSandboxConfig(input);
  } catch (error) {
    if (SandboxConfigError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error("expected the settings to be refused");
}

describe("each sandbox's own uid", () => {
  it("gives live sandboxes distinct uids (gid the same) from userRange, and a released uid back", () => {
    const config = parseSandboxConfig({ userRange: { first: 200_000, count: 3 } });
    expect(config.user).toBeUndefined();
    const identities = [allocateIdentity(config), allocateIdentity(config), allocateIdentity(config)];
    const users = identities.map((identity) => identity.config.user);
    expect(new Set(users).size).toBe(3);
    for (const user of users) {
      expect(user).toMatch(/^(\d+):\1$/);
      expect(uidOf(user)).toBeGreaterThanOrEqual(200_000);
      expect(uidOf(user)).toBeLessThanOrEqual(200_002);
    }
    // The range is used up while all three live: a fourth is refused with the fix.
    expect(() => allocateIdentity(config)).toThrow(
      /Every uid of userRange \(200000 to 200002\).*widen userRange\.count/,
    );
    try {
      allocateIdentity(config);
    } catch (error) {
      expect(SandboxError.isInstance(error)).toBe(true);
    }
    identities[1]!.release();
    identities[1]!.release();
    expect(allocateIdentity(config).config.user).toBe(users[1]);
    identities[0]!.release();
    expect(allocateIdentity(config).config.user).toBe(users[0]);
  });

  it("uses the default range, far from login, system and nobody uids, and never uid 0", () => {
    const identity = allocateIdentity(parseSandboxConfig({}));
    const uid = uidOf(identity.config.user);
    expect(uid).toBeGreaterThanOrEqual(0x7000_0000);
    expect(uid).toBeLessThan(0x7000_0000 + 2 ** 24);
    identity.release();
  });

  it("keeps a set user for every sandbox (nothing allocated)", () => {
    const config = parseSandboxConfig({ user: "1000:1000" });
    expect(allocateIdentity(config).config).toBe(config);
    expect(allocateIdentity(config).config.user).toBe("1000:1000");
  });

  it("builds and reads back the container's user and /workspace owner from the allocated uid", () => {
    const identity = allocateIdentity(parseSandboxConfig({ userRange: { first: 300_000, count: 10 } }));
    const uid = uidOf(identity.config.user);
    const spec = buildContainerSpec(identity.config, { labels: {}, deadlineSeconds: 60 });
    expect(spec.User).toBe(`${uid}:${uid}`);
    expect(spec.HostConfig?.Tmpfs?.["/workspace"]).toContain(`uid=${uid},gid=${uid},`);
    const info = {
      Id: "0123456789abcdef",
      Mounts: [],
      HostConfig: { ...spec.HostConfig },
      Config: { User: "65534:65534", Hostname: spec.Hostname, Env: spec.Env },
      NetworkSettings: { Networks: { none: {} } },
    } as never;
    expect(findSpecProblems(info, identity.config)).toEqual(['User is "65534:65534"']);
    // A config without a user (never allocated) cannot build a container at all.
    expect(() => buildContainerSpec(parseSandboxConfig({}), { labels: {}, deadlineSeconds: 60 })).toThrow(
      /no uid was allocated/,
    );
    identity.release();
  });

  it("refuses ranges with uid 0, nobody, 16-bit -1 or ids from 2^31, and user with userRange, naming the fix", () => {
    expect(configError({ userRange: { first: 0, count: 10 } })).toContain(
      "userRange.first must be an integer of at least 1 (uid 0 is root), got 0",
    );
    expect(configError({ userRange: { first: 10, count: 0 } })).toContain(
      "userRange.count must be an integer of at least 1, got 0",
    );
    expect(configError({ userRange: { first: 60_000, count: 10_000 } })).toContain(
      "userRange 60000-69999 holds 65534 (nobody) or 65535 (16-bit -1); start it above 65535",
    );
    expect(configError({ userRange: { first: 2 ** 31 - 5, count: 10 } })).toContain(
      "userRange ends at 2147483652, above 2147483647",
    );
    expect(configError({ userRange: { first: 1, count: 1, last: 3 } })).toContain("userRange");
    expect(configError({ userRange: "100000-200000" })).toContain(
      "userRange must be an object such as { first: 1879048192, count: 16777216 }",
    );
    expect(configError({ user: "1000", userRange: { first: 100_000, count: 10 } })).toContain(
      "user and userRange exclude each other",
    );
  });
});
