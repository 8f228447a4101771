import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveUser, type SandboxConfig } from "../config.ts";
import { engineInfo } from "../connection/engine-info.ts";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { seccompProfile } from "./seccomp-profile.ts";

/**
 * How the engine takes the sandbox's settings. Docker takes them as the sandbox writes them; Podman's
 * Docker-compatible API differs in a few places (docs/sandbox.md, "Podman"), each handled here:
 * - it opens a `seccomp=` value as a file path (Docker takes the JSON itself), so the profile is
 *   written to a file on this machine, which must therefore be the engine's machine;
 * - it ignores `MaskedPaths`, so the paths are masked with its own `mask=` security option, and read
 *   back from inside the container (its inspect shows neither);
 * - it has no `uid=`/`gid=` tmpfs option: `U` gives /workspace to the container's user;
 * - it raises the open-files and process limits to 1048576 unless told otherwise, which fails where
 *   the engine lacks CAP_SYS_RESOURCE: the sandbox sets both;
 * - it mounts a writable /run tmpfs without a size on a read-only root: the sandbox mounts its own,
 *   small and noexec.
 */
export type EngineDialect =
  | { engine: "docker"; seccompProfilePath?: undefined }
  | {
      engine: "podman";
      /** Podman's own version, such as "4.3.1". */
      version: string;
      /** The sandbox's seccomp profile, written on this machine for the engine to open. */
      seccompProfilePath: string;
      rootless: boolean;
    };

export const dockerDialect: EngineDialect = { engine: "docker" };

/**
 * How an engine takes the sandbox's settings and reports them back, as values: the container spec
 * and its read-back (container-spec.ts, launch.ts) read these and name no engine.
 */
export type EngineWays = {
  /** The /workspace tmpfs's owner: Docker's `uid=`/`gid=` options, or Podman's `U` (it has neither). */
  workspaceOwner: "uid-gid" | "U";
  /** tmpfs mounts the sandbox adds: under Podman its own small /run, in place of Podman's unbounded one. */
  addedTmpfs: Record<string, string>;
  /** Masks the paths with the engine's own `mask=` security option (Podman ignores MaskedPaths). */
  masksWithOption: boolean;
  /** Ulimits beyond core dumps: under Podman open files and processes (it would ask for 1048576 of each). */
  addedUlimits: { Name: string; Soft: number; Hard: number }[];
  /** Its inspect shows CapDrop ALL (Podman names each capability dropped: read from inside instead). */
  reportsCapDropAll: boolean;
  /** Its inspect shows MaskedPaths (Podman's does not: read from inside instead). */
  reportsMaskedPaths: boolean;
  /** The IpcMode values of a private IPC namespace ("shareable": Podman's, which joining takes the API for). */
  privateIpcModes: string[];
  /** What it appends to every tmpfs's options when it reports them. */
  reportedTmpfsSuffix: string;
  /** Environment entries it adds to every container (none of them from the host). */
  addedEnvironment: string[];
  /** The flags its inspect does not show are read from inside the started container (podman-read-back.ts). */
  readsBackInside: boolean;
};

const engineWays: Record<EngineDialect["engine"], EngineWays> = {
  docker: {
    workspaceOwner: "uid-gid",
    addedTmpfs: {},
    masksWithOption: false,
    addedUlimits: [],
    reportsCapDropAll: true,
    reportsMaskedPaths: true,
    privateIpcModes: ["private"],
    reportedTmpfsSuffix: "",
    addedEnvironment: [],
    readsBackInside: false,
  },
  podman: {
    workspaceOwner: "U",
    addedTmpfs: { "/run": "rw,noexec,nosuid,nodev,size=65536" },
    masksWithOption: true,
    addedUlimits: [
      { Name: "nofile", Soft: 4096, Hard: 4096 },
      { Name: "nproc", Soft: 4096, Hard: 4096 },
    ],
    reportsCapDropAll: false,
    reportsMaskedPaths: false,
    privateIpcModes: ["private", "shareable"],
    reportedTmpfsSuffix: ",rprivate,tmpcopyup",
    addedEnvironment: ["container=podman", "TERM=xterm", "HOSTNAME=sandbox"],
    readsBackInside: true,
  },
};

/** The ways of the engine a dialect names. */
export function waysOf(dialect: EngineDialect): EngineWays {
  return engineWays[dialect.engine];
}

/**
 * The profile as a file only this user may change and everyone (a rootless engine's user too) may
 * read, named by its content: every process of this user shares it and nothing is left per process.
 * A folder or file someone else made there is refused, never used.
 */
function seccompProfileFile(): string {
  const content = JSON.stringify(seccompProfile);
  const digest = createHash("sha256").update(content).digest("hex").slice(0, 16);
  const uid = process.getuid?.() ?? 0;
  const folder = join(tmpdir(), `codeaction-seccomp-${uid}-${digest}`);
  const path = join(folder, "profile.json");
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const folderStats = lstatSync(folder);
  const fileStats = existsSync(path) ? lstatSync(path) : undefined;
  const foreign = (stats: Stats) => stats.uid !== uid || (stats.mode & 0o022) !== 0;
  if (
    !folderStats.isDirectory() ||
    foreign(folderStats) ||
    (fileStats && (!fileStats.isFile() || foreign(fileStats)))
  ) {
    throw new SandboxError(
      `The sandbox's seccomp profile for Podman goes to ${path}, but that folder or file belongs to another user or is writable by others: remove ${folder} and retry.`,
      { code: "engine-unsupported" },
    );
  }
  chmodSync(folder, 0o755);
  if (fileStats && readFileSync(path, "utf8") === content) return path;
  const written = join(folder, `.profile-${process.pid}-${Date.now()}.json`);
  writeFileSync(written, content, { mode: 0o444, flag: "wx" });
  renameSync(written, path);
  return path;
}

/** The local socket a client dials, or undefined when it dials over the network. */
function localSocketOf(docker: ContainerEngine): string | undefined {
  const socketPath = docker.modem?.socketPath;
  return typeof socketPath === "string" ? socketPath : undefined;
}

/**
 * Which engine answers, and for Podman the refusals: over the network (the profile file would have to
 * be on the engine's machine), and rootless where the limits cannot be enforced.
 */
export async function detectEngineDialect(
  docker: ContainerEngine,
  config: SandboxConfig,
): Promise<EngineDialect> {
  const info = await engineInfo(docker);
  if (info.podmanVersion === undefined) return dockerDialect;
  const refuse = (reason: string, fix: string) =>
    new SandboxError(`The engine is Podman ${info.podmanVersion}, and ${reason}. ${fix}`, {
      code: "engine-unsupported",
    });
  if (!localSocketOf(docker)) {
    throw refuse(
      "it is reached over the network: Podman's Docker-compatible API opens the seccomp profile as a file on its own machine (Docker takes the profile itself), so the sandbox cannot apply its profile there",
      "Run the agent on the Podman host and use its unix socket, or use Docker on the remote host.",
    );
  }
  const rootless = info.rootless;
  if (rootless) await requireRootlessSupport(docker, info, config, refuse);
  if (config.network !== "none" && config.network !== "full") {
    throw refuse(
      "the sandbox's allow-list networking (its egress proxy and per-session internal networks) has not been made to hold on Podman",
      'Use network: "none" (or "full") on Podman, or Docker for an allow-list.',
    );
  }
  if (config.backend === "gvisor") {
    throw refuse(
      'backend "gvisor" is not supported on it: the sandbox reads back a Docker runtime name Podman does not report',
      'Use backend: "docker" on Podman, or Docker with runsc registered for gVisor.',
    );
  }
  return {
    engine: "podman",
    version: info.podmanVersion,
    seccompProfilePath: seccompProfileFile(),
    rootless,
  };
}

type Refusal = (reason: string, fix: string) => SandboxError;

/** What Podman's own API says about its host (GET /libpod/info): cgroup controllers and id maps. */
type PodmanHost = {
  cgroupControllers?: string[];
  idMappings?: { uidmap?: { container_id: number; size: number }[] | null };
};

function podmanHostInfo(docker: ContainerEngine): Promise<PodmanHost> {
  const modem = docker.modem;
  if (!modem) return Promise.reject(new Error("this engine client cannot send Podman's own requests"));
  return new Promise((resolve, reject) => {
    modem.dial(
      { path: "/libpod/info", method: "GET", statusCodes: { 200: true }, options: {} },
      (error: unknown, data: unknown) => {
        if (error) reject(error);
        else resolve((data as { host?: PodmanHost }).host ?? {});
      },
    );
  });
}

/**
 * Rootless Podman limits memory, processes and CPU only on cgroup v2 with those controllers
 * delegated to its user (its Docker-compatible info says MemoryLimit true either way), and maps only
 * its user's subordinate ids into a container.
 */
async function requireRootlessSupport(
  docker: ContainerEngine,
  info: Awaited<ReturnType<typeof engineInfo>>,
  config: SandboxConfig,
  refuse: Refusal,
): Promise<void> {
  if (info.cgroupVersion !== "2") {
    throw refuse(
      `it runs rootless on cgroup v${info.cgroupVersion ?? "?"}: rootless Podman cannot set cgroup limits there and ignores them ("Resource limits are not supported and ignored on cgroups V1 rootless systems"), so the sandbox's memoryLimit (${config.memoryLimit}), pidsLimit (${config.pidsLimit}) and cpuLimit (${config.cpuLimit}) would not hold`,
      "Boot the host with cgroup v2 (systemd.unified_cgroup_hierarchy=1) and delegate the memory, pids and cpu controllers to the user, or run Podman as root.",
    );
  }
  const host = await podmanHostInfo(docker);
  const controllers = host.cgroupControllers ?? [];
  const missing = ["memory", "pids", "cpu"].filter((controller) => !controllers.includes(controller));
  if (missing.length > 0) {
    throw refuse(
      `it runs rootless without the ${missing.join(", ")} cgroup controller${missing.length > 1 ? "s" : ""} delegated to its user (it has ${controllers.join(", ") || "none"}), so the sandbox's limits would not hold`,
      "Delegate the controllers to the user (systemd: Delegate=memory pids cpu in user@.service.d), or run Podman as root.",
    );
  }
  const mapped = (host.idMappings?.uidmap ?? []).reduce(
    (highest, entry) => Math.max(highest, entry.container_id + entry.size),
    0,
  );
  const highestUid = config.user
    ? resolveUser(config.user).uid
    : config.userRange.first + config.userRange.count - 1;
  if (!(highestUid < mapped)) {
    throw refuse(
      `it runs rootless with ${mapped} user ids mapped into a container (its user's subordinate ids), and the sandbox would run as uid ${highestUid}`,
      `Set userRange (for example { first: 10000, count: ${Math.max(1, mapped - 10000)} }) or user within the mapped ids.`,
    );
  }
}
