import { resolveUser, type SandboxConfig, sizeInBytes } from "../config.ts";
import type { ContainerCreateOptions, ContainerInspectInfo, HostConfig } from "../engine/container-engine.ts";
import { SecurityFlagError } from "../errors/security-flag-error.ts";
import { placedFilesDirectory } from "../files/placement-path.ts";
import { findSessionNetworkProblems, type SessionNetwork } from "../network/session-network.ts";
import { type BindMount, bindMountsSpec, findBindMountProblems } from "./bind-mounts.ts";
import { dockerDialect, type EngineDialect, waysOf } from "./engine-dialect.ts";
import { initCommand } from "./init.ts";
import { lifelineStdio } from "./lifeline.ts";
import { findSeccompProblems, seccompSecurityOption } from "./seccomp-profile.ts";

/** The hostname every sandbox gets: nothing about the host leaks through it. */
export const sandboxHostname = "sandbox";

/** Variables the sandbox sets itself (callers' `env` overrides them). No host variable ever crosses. */
export const sandboxDefaultEnv: Record<string, string> = {
  HOME: "/workspace",
  PYTHONPATH: "/workspace/.packages",
  PYTHONDONTWRITEBYTECODE: "1",
};

/** The runtime the container runs under: runsc for gVisor, the configured one, or the engine default. */
export function runtimeFor(config: SandboxConfig): string | undefined {
  if (config.backend === "gvisor") return config.runtime ?? "runsc";
  return config.runtime;
}

export function dockerUser(config: SandboxConfig): string {
  const { uid, gid } = resolveUser(config.user);
  return `${uid}:${gid}`;
}

export function tmpfsFor(
  config: SandboxConfig,
  dialect: EngineDialect = dockerDialect,
  options: { dataFolder?: boolean } = {},
): Record<string, string> {
  const { uid, gid } = resolveUser(config.user);
  const disk = sizeInBytes(config.diskLimit);
  const ways = waysOf(dialect);
  // Podman has no uid=/gid= tmpfs option: U gives the folder to the container's user.
  const owner = ways.workspaceOwner === "U" ? "mode=0700,U" : `uid=${uid},gid=${gid},mode=0700`;
  // Sealed (0555) as a copy leaves it; a later copy opens it and seals it again (place-files.ts).
  const dataOwner = ways.workspaceOwner === "U" ? "mode=0555,U" : `uid=${uid},gid=${gid},mode=0555`;
  return {
    "/workspace": `rw,nosuid,nodev,size=${disk},${owner}`,
    "/tmp": `rw,noexec,nosuid,nodev,size=${disk}`,
    "/var/tmp": `rw,noexec,nosuid,nodev,size=${Math.max(1024 * 1024, Math.floor(disk / 2))}`,
    ...ways.addedTmpfs,
    // With mounted files: their folder is the sandbox user's own (under runc the mount points would
    // make it root's), so files given later are copied beside them.
    ...(options.dataFolder
      ? { [placedFilesDirectory]: `rw,noexec,nosuid,nodev,size=${disk},${dataOwner}` }
      : {}),
  };
}

/** The seccomp entry the engine takes: the profile itself (Docker), or its file (Podman). */
export function seccompOptionFor(dialect: EngineDialect): string {
  const profilePath = dialect.seccompProfilePath;
  return profilePath ? `seccomp=${profilePath}` : seccompSecurityOption;
}

/** The security options: Podman masks paths by its own option (it ignores MaskedPaths). */
function securityOptionsFor(dialect: EngineDialect): string[] {
  const options = ["no-new-privileges", seccompOptionFor(dialect)];
  if (waysOf(dialect).masksWithOption) options.push(`mask=${podmanMaskedPaths.join(":")}`);
  return options;
}

/** Core dumps off; under Podman the open-files and process limits too (see engine-dialect.ts). */
function ulimitsFor(dialect: EngineDialect): { Name: string; Soft: number; Hard: number }[] {
  return [{ Name: "core", Soft: 0, Hard: 0 }, ...waysOf(dialect).addedUlimits];
}

/**
 * The full create options for one sandbox container. PID 1 is the sandbox's own init (init.ts): the
 * container ends at its deadline even if the host process died, and as soon as the owner's stdin
 * attach connection (the lifeline) drops. As the namespace's init it cannot be signalled, traced or
 * rewritten by the program.
 */
export function buildContainerSpec(
  config: SandboxConfig,
  options: {
    labels: Record<string, string>;
    deadlineSeconds: number;
    name?: string;
    dialect?: EngineDialect;
    /** Host files bind-mounted read-only (checked by files/mount-files.ts); none by default. */
    mounts?: readonly BindMount[];
  },
): ContainerCreateOptions {
  const dialect = options.dialect ?? dockerDialect;
  const memory = sizeInBytes(config.memoryLimit);
  const runtime = runtimeFor(config);
  const environment = { ...sandboxDefaultEnv, ...config.env };
  return {
    ...(options.name ? { name: options.name } : {}),
    Image: config.image,
    Entrypoint: initCommand(options.deadlineSeconds),
    Cmd: [],
    User: dockerUser(config),
    WorkingDir: config.workdir,
    Env: Object.entries(environment).map(([key, value]) => `${key}=${value}`),
    Hostname: sandboxHostname,
    Domainname: "",
    Labels: options.labels,
    ...lifelineStdio,
    NetworkDisabled: config.network === "none",
    HostConfig: {
      NetworkMode: config.network === "none" ? "none" : "bridge",
      ReadonlyRootfs: config.readOnlyRootfs,
      CapDrop: ["ALL"],
      CapAdd: [],
      // Our own seccomp profile (seccomp-profile.ts) for PID 1 and everything after it.
      SecurityOpt: securityOptionsFor(dialect),
      Privileged: false,
      PidsLimit: config.pidsLimit,
      Memory: memory,
      MemorySwap: memory,
      NanoCpus: Math.round(config.cpuLimit * 1e9),
      // No docker-init: our init must be PID 1 itself, where the kernel shields it from the program.
      Init: false,
      IpcMode: "private",
      Tmpfs: tmpfsFor(config, dialect, { dataFolder: (options.mounts ?? []).length > 0 }),
      Binds: [],
      Mounts: bindMountsSpec(options.mounts ?? []),
      VolumesFrom: [],
      Devices: [],
      RestartPolicy: { Name: "no" },
      AutoRemove: false,
      Ulimits: ulimitsFor(dialect),
      // No container log: under gVisor the program can open /proc/1/fd/1, and a json-file log
      // would put whatever it writes there on the host's disk, outside every limit.
      LogConfig: { Type: "none", Config: {} },
      MaskedPaths: maskedPaths,
      ...(runtime ? { Runtime: runtime } : {}),
    },
  };
}

/**
 * Paths of /proc and /sys hidden from the program (a file becomes /dev/null, a folder an empty
 * tmpfs). Setting the list replaces Docker's default, so it starts with Docker's own list; the rest
 * describe the host rather than the container: the kernel's boot arguments (on a VM they name the
 * host agent's ports), its build configuration, its loaded modules, its interrupt counters and its
 * hardware (memory map, I/O ports, PCI devices).
 */
export const maskedPaths = [
  // Docker's default (moby's oci/defaults.go), kept whole.
  "/proc/asound",
  "/proc/acpi",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/sys/firmware",
  // Ours: what describes the host.
  "/proc/cmdline",
  "/proc/config.gz",
  "/proc/modules",
  "/proc/interrupts",
  "/sys/devices/virtual/powercap",
  // The host's hardware: its physical memory map, I/O ports and PCI devices (issue 29).
  "/proc/iomem",
  "/proc/ioports",
  "/sys/bus/pci",
  "/sys/class/pci_bus",
  "/sys/devices/pci0000:00",
];

/**
 * The paths Podman masks: its `mask=` option is a list split at colons, so a path that holds one
 * (`/sys/devices/pci0000:00`) cannot be named and would arrive as two wrong paths. Under Podman
 * that folder stays readable; /sys/bus/pci and /sys/class/pci_bus, which lead to it, are masked.
 */
export const podmanMaskedPaths = maskedPaths.filter((path) => !path.includes(":"));

/**
 * Reads a created container back and lists every security setting that did not take. Empty means
 * the container is what was asked for. The engine drops flags it does not understand with only a
 * warning, so this is the check that counts.
 */
export function findSpecProblems(
  info: ContainerInspectInfo,
  config: SandboxConfig,
  options: SpecCheckOptions = {},
): string[] {
  const host = info.HostConfig as InspectedHostConfig;
  const dialect = options.dialect ?? dockerDialect;
  return [
    ...findNetworkProblems(info, host, config, options.sessionNetwork),
    ...findPrivilegeAndLimitProblems(host, config, dialect),
    ...findIsolationProblems(info, host, config, { ...options, dialect }),
  ];
}

/** What else a read-back compares against: the image's environment, the session network, the engine. */
export type SpecCheckOptions = {
  imageEnv?: string[];
  sessionNetwork?: SessionNetwork;
  dialect?: EngineDialect;
  /** The host files mounted read-only: the read-back accepts exactly these, and no other mount. */
  mounts?: readonly BindMount[];
};

type InspectedHostConfig = HostConfig & Record<string, unknown>;

/** A list of problems and the check that adds one when a condition is false. */
function problemList(): { problems: string[]; expect: (ok: boolean, problem: string) => void } {
  const problems: string[] = [];
  return {
    problems,
    expect: (ok, problem) => {
      if (!ok) problems.push(problem);
    },
  };
}

/** The network mode and attachments. */
function findNetworkProblems(
  info: ContainerInspectInfo,
  host: InspectedHostConfig,
  config: SandboxConfig,
  sessionNetwork: SessionNetwork | undefined,
): string[] {
  const { problems, expect } = problemList();
  // An allow-list without its session network must not fall back to any network: fail closed.
  const wantNetwork =
    sessionNetwork?.networkName ??
    (config.network === "none" ? "none" : config.network === "full" ? "bridge" : "a session network");
  expect(host.NetworkMode === wantNetwork, `NetworkMode is ${host.NetworkMode}, not ${wantNetwork}`);
  if (sessionNetwork) problems.push(...findSessionNetworkProblems(info, sessionNetwork));
  if (config.network === "none") {
    const networks = Object.keys(info.NetworkSettings?.Networks ?? {});
    expect(
      networks.every((name) => name === "none"),
      `the container is attached to networks ${networks.join(", ")}`,
    );
  }
  return problems;
}

/** Capabilities, privileges, security profiles and the resource limits. */
function findPrivilegeAndLimitProblems(
  host: InspectedHostConfig,
  config: SandboxConfig,
  dialect: EngineDialect,
): string[] {
  const { problems, expect } = problemList();
  const memory = sizeInBytes(config.memoryLimit);
  expect(host.ReadonlyRootfs === config.readOnlyRootfs, `ReadonlyRootfs is ${host.ReadonlyRootfs}`);
  // Podman reports the capabilities it dropped by name, never ALL: they are read from inside the
  // started container instead (engine/podman-read-back.ts).
  expect(
    !waysOf(dialect).reportsCapDropAll ||
      (host.CapDrop ?? []).map((cap: string) => cap.toUpperCase()).includes("ALL"),
    "CapDrop does not include ALL",
  );
  expect((host.CapAdd ?? []).length === 0, `CapAdd is ${JSON.stringify(host.CapAdd)}`);
  expect(
    (host.SecurityOpt ?? []).some((option: string) => /^no-new-privileges(?:[:=]true)?$/.test(option)),
    "SecurityOpt lacks no-new-privileges",
  );
  expect(
    !(host.SecurityOpt ?? []).some((option: string) => /unconfined/.test(option)),
    `SecurityOpt disables a profile: ${JSON.stringify(host.SecurityOpt)}`,
  );
  problems.push(...findSeccompProblems(host.SecurityOpt ?? [], seccompOptionFor(dialect)));
  expect(host.Privileged === false, "the container is privileged");
  expect(host.PidsLimit === config.pidsLimit, `PidsLimit is ${host.PidsLimit}, not ${config.pidsLimit}`);
  expect(host.Memory === memory, `Memory is ${host.Memory}, not ${memory}`);
  expect(host.MemorySwap === memory, `MemorySwap is ${host.MemorySwap}, not ${memory} (swap must be off)`);
  const nanoCpus = Math.round(config.cpuLimit * 1e9);
  expect(host.NanoCpus === nanoCpus, `NanoCpus is ${host.NanoCpus}, not ${nanoCpus}`);
  expect(host.Init !== true, "Init is set: docker-init would be PID 1 instead of the sandbox's init");
  expect(host.LogConfig?.Type === "none", `LogConfig is ${JSON.stringify(host.LogConfig?.Type)}, not none`);
  return problems;
}

/** Masked paths, namespaces, mounts and devices, the tmpfs folders, the runtime, the user and the environment. */
function findIsolationProblems(
  info: ContainerInspectInfo,
  host: InspectedHostConfig,
  config: SandboxConfig,
  options: SpecCheckOptions & { dialect: EngineDialect },
): string[] {
  const { problems, expect } = problemList();
  const ways = waysOf(options.dialect);
  const masked = new Set((host.MaskedPaths ?? []) as string[]);
  const unmasked = maskedPaths.filter((path) => !masked.has(path));
  // Podman shows no masked paths in inspect: they are read from inside (engine/podman-read-back.ts).
  expect(!ways.reportsMaskedPaths || unmasked.length === 0, `MaskedPaths lacks ${unmasked.join(", ")}`);
  expect(!["host"].includes(String(host.PidMode ?? "")), `PidMode is ${host.PidMode}`);
  // A private IPC namespace (Podman's "shareable" is one other containers may join only through its API).
  expect(ways.privateIpcModes.includes(String(host.IpcMode)), `IpcMode is ${host.IpcMode}, not private`);
  expect(String(host.UsernsMode ?? "") !== "host", "UsernsMode is host");
  expect(String(host.UTSMode ?? "") !== "host", "UTSMode is host");
  problems.push(...findBindMountProblems(info, host, options.mounts ?? []));
  expect((host.Devices ?? []).length === 0, "the container has devices");
  const wantTmpfs = tmpfsFor(config, options.dialect, { dataFolder: (options.mounts ?? []).length > 0 });
  const haveTmpfs = (host.Tmpfs ?? {}) as Record<string, string>;
  const { uid, gid } = resolveUser(config.user);
  for (const [path, mountOptions] of Object.entries(wantTmpfs)) {
    const reported = `${mountOptions}${ways.reportedTmpfsSuffix}`;
    // Once started, Podman reports what U became: the container user's uid and gid.
    const started = reported.replace(",U,", `,uid=${uid},gid=${gid},`);
    expect(
      haveTmpfs[path] === reported || haveTmpfs[path] === started,
      `tmpfs ${path} is ${JSON.stringify(haveTmpfs[path])}, not ${reported}`,
    );
  }
  const runtime = runtimeFor(config);
  if (runtime) expect(host.Runtime === runtime, `Runtime is ${host.Runtime}, not ${runtime}`);
  expect(info.Config.User === dockerUser(config), `User is ${JSON.stringify(info.Config.User)}`);
  expect(info.Config.Hostname === sandboxHostname, `Hostname is ${info.Config.Hostname}`);
  const allowed = new Set([
    ...(options.imageEnv ?? []),
    ...ways.addedEnvironment,
    ...Object.entries({ ...sandboxDefaultEnv, ...config.env, ...options.sessionNetwork?.environment }).map(
      ([key, value]) => `${key}=${value}`,
    ),
  ]);
  const extra = (info.Config.Env ?? []).filter((entry) => !allowed.has(entry));
  expect(
    extra.length === 0,
    `unexpected environment variables: ${extra.map((entry) => entry.split("=")[0]).join(", ")}`,
  );
  return problems;
}

/** Throws SecurityFlagError when findSpecProblems finds anything. */
export function verifyContainerSpec(
  info: ContainerInspectInfo,
  config: SandboxConfig,
  options: SpecCheckOptions = {},
): void {
  const problems = findSpecProblems(info, config, options);
  if (problems.length > 0) throw new SecurityFlagError({ problems, containerId: info.Id });
}
