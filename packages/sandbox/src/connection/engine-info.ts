import type { ContainerEngine } from "../engine/container-engine.ts";

/**
 * What a Docker engine says about itself (`docker version` and `docker info` in one), for a
 * diagnosis such as `codeaction doctor`: the caller needs no Docker client calls of its own.
 */
export type EngineInfo = {
  /** The engine's version, such as "27.3.1". */
  version: string;
  /** The API version it speaks, such as "1.47". */
  apiVersion: string;
  os: string;
  arch: string;
  kernelVersion: string;
  /** Set when the engine is Podman's Docker-compatible API: Podman's version ("" when it gives none). */
  podmanVersion?: string;
  /** "1" or "2", when the engine reports it. */
  cgroupVersion?: string;
  cgroupDriver?: string;
  /** The registered runtimes by name, sorted ("runsc" when gVisor is registered). */
  runtimes: string[];
  defaultRuntime?: string;
  /** False only when the engine says it cannot limit memory (missing cgroup controller). */
  memoryLimit: boolean;
  /** False only when the engine says it cannot limit the number of processes. */
  pidsLimit: boolean;
  /** The security options by name ("seccomp", "apparmor", "rootless", ...). */
  securityOptions: string[];
  /** Whether the engine runs as a user other than root (Docker's "rootless" option, Podman's Rootless). */
  rootless: boolean;
};

type RawVersion = {
  Version?: string;
  ApiVersion?: string;
  Os?: string;
  Arch?: string;
  KernelVersion?: string;
  Components?: { Name?: string; Version?: string }[];
};
type RawInfo = {
  Runtimes?: Record<string, unknown>;
  DefaultRuntime?: string;
  CgroupVersion?: string;
  CgroupDriver?: string;
  MemoryLimit?: boolean;
  PidsLimit?: boolean;
  SecurityOptions?: string[];
  Rootless?: boolean;
};

/** Asks the engine for its version and settings (one `version` and one `info` call, at once). */
export async function engineInfo(docker: ContainerEngine): Promise<EngineInfo> {
  const [version, info] = (await Promise.all([docker.version(), docker.info()])) as [RawVersion, RawInfo];
  const podman = version.Components?.find((component) => /podman/i.test(component.Name ?? ""));
  const securityOptions = (info.SecurityOptions ?? []).map(
    (option) => /name=([^,]+)/.exec(option)?.[1] ?? option,
  );
  return {
    version: version.Version ?? "?",
    apiVersion: version.ApiVersion ?? "?",
    os: version.Os ?? "?",
    arch: version.Arch ?? "?",
    kernelVersion: version.KernelVersion ?? "?",
    ...(podman ? { podmanVersion: podman.Version ?? "" } : {}),
    ...(info.CgroupVersion ? { cgroupVersion: info.CgroupVersion } : {}),
    ...(info.CgroupDriver ? { cgroupDriver: info.CgroupDriver } : {}),
    runtimes: Object.keys(info.Runtimes ?? {}).sort(),
    ...(info.DefaultRuntime ? { defaultRuntime: info.DefaultRuntime } : {}),
    memoryLimit: info.MemoryLimit !== false,
    pidsLimit: info.PidsLimit !== false,
    securityOptions,
    rootless: info.Rootless === true || securityOptions.includes("rootless"),
  };
}
