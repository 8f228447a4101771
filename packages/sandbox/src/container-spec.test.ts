import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "./config.ts";
import { buildContainerSpec, findSpecProblems, verifyContainerSpec } from "./container-spec.ts";
import { SecurityFlagError } from "./errors/security-flag-error.ts";
import { initCommand } from "./init.ts";
import { seccompSecurityOption } from "./seccomp-profile.ts";
import { allocateIdentity } from "./user-ids.ts";

/** Settings as a sandbox gets them from its manager: its own uid of userRange filled in. */
const sandboxConfig = (input: Parameters<typeof parseSandboxConfig>[0]) =>
  allocateIdentity(parseSandboxConfig(input)).config;
const config = sandboxConfig({});
const [uid] = (config.user ?? "").split(":").map(Number) as [number];

/** An inspect result that says exactly what the spec asked for (as the engine reports it). */
function inspectFromSpec(spec: Dockerode.ContainerCreateOptions): Dockerode.ContainerInspectInfo {
  return {
    Id: "0123456789abcdef",
    Mounts: [],
    HostConfig: { ...spec.HostConfig },
    Config: { User: spec.User, Hostname: spec.Hostname, Env: spec.Env, Labels: spec.Labels },
    NetworkSettings: { Networks: { none: {} } },
  } as unknown as Dockerode.ContainerInspectInfo;
}

describe("the container spec", () => {
  const spec = buildContainerSpec(config, { labels: { a: "b" }, deadlineSeconds: 60 });

  it("sets every flag: no network, read-only root, no capabilities, limits, init, tmpfs, non-root", () => {
    expect(spec.HostConfig).toMatchObject({
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges", seccompSecurityOption],
      PidsLimit: 256,
      Memory: 4 * 1024 ** 3,
      MemorySwap: 4 * 1024 ** 3,
      NanoCpus: 2e9,
      Init: false,
      Binds: [],
      Privileged: false,
      LogConfig: { Type: "none", Config: {} },
    });
    expect(spec.HostConfig?.Tmpfs).toEqual({
      "/workspace": `rw,nosuid,nodev,size=1073741824,uid=${uid},gid=${uid},mode=0700`,
      "/tmp": "rw,noexec,nosuid,nodev,size=1073741824",
      "/var/tmp": "rw,noexec,nosuid,nodev,size=536870912",
    });
    expect(spec.User).toBe(`${uid}:${uid}`);
    expect(uid).toBeGreaterThanOrEqual(0x7000_0000);
    expect(uid).toBeLessThan(0x7000_0000 + 2 ** 24);
    expect(spec.Hostname).toBe("sandbox");
    expect(spec.Entrypoint).toEqual(initCommand(60));
    expect(spec.Entrypoint?.slice(0, 4)).toEqual(["python3", "-I", "-S", "-c"]);
    expect(spec.Entrypoint?.at(-1)).toBe("60");
    expect(spec.OpenStdin).toBe(true);
    expect(spec.StdinOnce).toBe(true);
    expect(spec.HostConfig?.Runtime).toBeUndefined();
  });

  it("passes no host environment, only the sandbox's own and `env`", () => {
    process.env.CODEACTION_TEST_SECRET = "secret";
    const withEnv = buildContainerSpec(sandboxConfig({ env: { A: "1" } }), {
      labels: {},
      deadlineSeconds: 60,
    });
    expect(withEnv.Env).toContain("A=1");
    expect(withEnv.Env?.some((entry) => entry.includes("secret"))).toBe(false);
    delete process.env.CODEACTION_TEST_SECRET;
  });

  it("uses runsc for gVisor and root only when asked", () => {
    const gvisor = buildContainerSpec(sandboxConfig({ backend: "gvisor" }), {
      labels: {},
      deadlineSeconds: 60,
    });
    expect(gvisor.HostConfig?.Runtime).toBe("runsc");
    const root = buildContainerSpec(sandboxConfig({ user: "root" }), {
      labels: {},
      deadlineSeconds: 60,
    });
    expect(root.User).toBe("0:0");
    expect(root.HostConfig?.Tmpfs?.["/workspace"]).toContain("uid=0,gid=0");
  });

  it("finds nothing wrong with a container that took every flag", () => {
    expect(findSpecProblems(inspectFromSpec(spec), config)).toEqual([]);
  });

  it("fails closed, naming each flag the engine dropped", () => {
    const info = inspectFromSpec(spec);
    info.HostConfig = {
      ...info.HostConfig,
      PidsLimit: 0,
      SecurityOpt: [],
      MemorySwap: -1,
      NetworkMode: "bridge",
      Binds: ["/:/host"],
      LogConfig: { Type: "json-file", Config: {} },
      MaskedPaths: ["/proc/kcore"],
    } as Dockerode.HostConfig;
    info.Config.Env = [...(info.Config.Env ?? []), "AWS_SECRET_ACCESS_KEY=x"];
    const problems = findSpecProblems(info, config);
    expect(problems).toEqual(
      expect.arrayContaining([
        "PidsLimit is 0, not 256",
        "SecurityOpt lacks no-new-privileges",
        "SecurityOpt has no seccomp profile (Docker's default would apply)",
        expect.stringContaining("MemorySwap is -1"),
        "NetworkMode is bridge, not none",
        expect.stringContaining("host folders are bound"),
        "unexpected environment variables: AWS_SECRET_ACCESS_KEY",
        'LogConfig is "json-file", not none',
        expect.stringMatching(/^MaskedPaths lacks .*\/proc\/cmdline, \/proc\/config\.gz/),
      ]),
    );
    expect(() => verifyContainerSpec(info, config)).toThrow(SecurityFlagError);
    try {
      verifyContainerSpec(info, config);
    } catch (error) {
      expect(SecurityFlagError.isInstance(error)).toBe(true);
      expect((error as SecurityFlagError).code).toBe("security-flag");
    }
  });

  it("fails closed when the seccomp profile is not exactly the sandbox's own", () => {
    const info = inspectFromSpec(spec);
    const edited = seccompSecurityOption.replace('"io_uring_setup",', "");
    for (const [securityOptions, problem] of [
      [["no-new-privileges", edited], /^the seccomp profile is not the sandbox's own/],
      [["no-new-privileges", "seccomp=unconfined"], /^the seccomp profile is not the sandbox's own/],
      [["no-new-privileges", seccompSecurityOption, "seccomp=unconfined"], /2 seccomp entries/],
    ] as const) {
      info.HostConfig = { ...info.HostConfig, SecurityOpt: [...securityOptions] } as Dockerode.HostConfig;
      expect(findSpecProblems(info, config)).toEqual(
        expect.arrayContaining([expect.stringMatching(problem)]),
      );
    }
  });
});
