import type Dockerode from "dockerode";
import { describe, expect, it } from "vitest";
import { parseSandboxConfig } from "../config.ts";
import { SecurityFlagError } from "../errors/security-flag-error.ts";
import { buildContainerSpec, findSpecProblems, maskedPaths, verifyContainerSpec } from "./container-spec.ts";
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

describe("the container spec on Podman", () => {
  const dialect = {
    engine: "podman",
    version: "4.3.1",
    seccompProfilePath: "/tmp/codeaction-seccomp-x/profile.json",
    rootless: false,
  } as const;
  const spec = buildContainerSpec(config, { labels: {}, deadlineSeconds: 60, dialect });

  /** What Podman 4.3 reports for that spec (as measured): names for dropped capabilities, its tmpfs suffix, its env. */
  function podmanInspect(options: { started: boolean }): Dockerode.ContainerInspectInfo {
    const inspected = inspectFromSpec(spec);
    const tmpfs = Object.fromEntries(
      Object.entries(spec.HostConfig?.Tmpfs ?? {}).map(([path, mountOptions]) => [
        path,
        `${options.started ? mountOptions.replace(",U", `,uid=${uid},gid=${uid}`) : mountOptions},rprivate,tmpcopyup`,
      ]),
    );
    inspected.HostConfig = {
      ...inspected.HostConfig,
      CapDrop: ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID"],
      IpcMode: "shareable",
      MaskedPaths: null,
      Tmpfs: tmpfs,
      SecurityOpt: ["no-new-privileges", `seccomp=${dialect.seccompProfilePath}`],
    } as unknown as Dockerode.HostConfig;
    inspected.Config.Env = [...(spec.Env ?? []), "container=podman", "TERM=xterm", "HOSTNAME=sandbox"];
    return inspected;
  }

  it("names the profile's file, masks by its own option, U for the workspace owner, a small /run, explicit ulimits", () => {
    expect(spec.HostConfig?.SecurityOpt).toEqual([
      "no-new-privileges",
      `seccomp=${dialect.seccompProfilePath}`,
      expect.stringMatching(/^mask=\/proc\/asound:.*:\/proc\/cmdline:/),
    ]);
    // Podman splits mask= at colons: every part must be a whole path we mask, none cut in two.
    const parts = String(spec.HostConfig?.SecurityOpt?.at(-1)).slice("mask=".length).split(":");
    expect(parts.every((part) => maskedPaths.includes(part))).toBe(true);
    expect(parts).toContain("/sys/bus/pci");
    expect(spec.HostConfig?.Tmpfs?.["/workspace"]).toBe("rw,nosuid,nodev,size=1073741824,mode=0700,U");
    expect(spec.HostConfig?.Tmpfs?.["/run"]).toBe("rw,noexec,nosuid,nodev,size=65536");
    expect(spec.HostConfig?.Ulimits).toEqual([
      { Name: "core", Soft: 0, Hard: 0 },
      { Name: "nofile", Soft: 4096, Hard: 4096 },
      { Name: "nproc", Soft: 4096, Hard: 4096 },
    ]);
  });

  it("reads back clean as Podman reports it, before and after start", () => {
    for (const started of [false, true]) {
      expect(findSpecProblems(podmanInspect({ started }), config, { dialect })).toEqual([]);
    }
  });

  it("still refuses what Podman did not take: another profile, a capability added, a wider tmpfs, a host variable", () => {
    const inspected = podmanInspect({ started: true });
    const host = inspected.HostConfig as Dockerode.HostConfig & Record<string, unknown>;
    host.SecurityOpt = ["no-new-privileges", "seccomp=/usr/share/containers/seccomp.json"];
    host.CapAdd = ["NET_RAW"];
    (host.Tmpfs as Record<string, string>)["/run"] = "rw,nosuid,nodev,rprivate,tmpcopyup";
    inspected.Config.Env = [...(inspected.Config.Env ?? []), "HOST_SECRET=1"];
    const problems = findSpecProblems(inspected, config, { dialect });
    expect(problems).toEqual([
      expect.stringMatching(/CapAdd/),
      expect.stringMatching(/seccomp profile is not the sandbox's own/),
      expect.stringMatching(/tmpfs \/run/),
      expect.stringMatching(/HOST_SECRET/),
    ]);
    // Docker's read-back is unchanged: Podman's report fails it.
    expect(findSpecProblems(podmanInspect({ started: false }), config)).toContain(
      "CapDrop does not include ALL",
    );
  });
});
