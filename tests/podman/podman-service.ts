import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";

// `podman system service` on a socket of the test's own, as root or as a user with subordinate ids
// (rootless: its own runtime folder and image store). Started and stopped by the tests.

/** The user scripts/setup-tests.sh creates with subordinate ids (also the remote tests' ssh login). */
export const rootlessUser = "codeaction-remote";

export type PodmanService = {
  /** unix:///... for DOCKER_HOST or the sandbox's engine.host. */
  host: string;
  socketPath: string;
  /** The podman command line as the service's user (root, or the rootless user with its folders). */
  podman: string[];
  stop(): Promise<void>;
};

function requirePodman(): void {
  for (const path of ["/usr/bin/podman", "/usr/bin/newuidmap"]) {
    if (!existsSync(path)) {
      throw new Error(
        `${path} is missing: run scripts/setup-tests.sh as root (scripts/test.sh does), which installs podman and uidmap`,
      );
    }
  }
}

/** Whether the engine behind a unix socket answers GET /_ping. */
function pings(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const pinging = request({ socketPath, path: "/_ping", timeout: 5000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    pinging.on("error", () => resolve(false));
    pinging.on("timeout", () => pinging.destroy());
    pinging.end();
  });
}

async function waitForService(socketPath: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let tries = 0; tries < 600; tries += 1) {
    if (child.exitCode !== null)
      throw new Error(`podman system service exited (${child.exitCode}): ${log()}`);
    if (await pings(socketPath)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`podman system service did not answer on ${socketPath} within a minute: ${log()}`);
}

function userIds(user: string): { uid: number; gid: number; home: string } {
  const [, , uid, gid, , home] = execFileSync("getent", ["passwd", user], { encoding: "utf8" })
    .trim()
    .split(":");
  return { uid: Number(uid), gid: Number(gid), home: home ?? "/" };
}

/** The podman command line as `user` (rootless) or as root, with its own runtime folder. */
function podmanCommand(folder: string, user: string | undefined): string[] {
  if (!user) return ["podman"];
  const { uid, gid, home } = userIds(user);
  const runtime = join(folder, "run");
  mkdirSync(runtime, { recursive: true });
  chownSync(folder, uid, gid);
  chownSync(runtime, uid, gid);
  chmodSync(runtime, 0o700);
  return [
    "setpriv",
    `--reuid=${uid}`,
    `--regid=${gid}`,
    "--init-groups",
    "env",
    `HOME=${home}`,
    `XDG_RUNTIME_DIR=${runtime}`,
    `USER=${user}`,
    "podman",
  ];
}

/** The pids whose environment names `runtime` as XDG_RUNTIME_DIR (only this test's rootless Podman). */
function processesWithRuntime(runtime: string): number[] {
  const wanted = `XDG_RUNTIME_DIR=${runtime}`;
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(wanted);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Sends SIGTERM to those processes, then SIGKILL to any still there after 10 s. */
async function endProcessesWithRuntime(runtime: string): Promise<void> {
  const signal = (pids: number[], name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Already gone.
      }
    }
  };
  signal(processesWithRuntime(runtime), "SIGTERM");
  for (let tries = 0; tries < 100 && processesWithRuntime(runtime).length > 0; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  signal(processesWithRuntime(runtime), "SIGKILL");
}

/** Starts the service (as root, or rootless as `options.user`) and resolves once it answers. */
export async function startPodmanService(options: { user?: string } = {}): Promise<PodmanService> {
  requirePodman();
  const folder = mkdtempSync(join(tmpdir(), "codeaction-podman-"));
  chmodSync(folder, 0o755);
  const podman = podmanCommand(folder, options.user);
  const socketPath = join(folder, "podman.sock");
  const [command = "podman", ...args] = podman;
  const child = spawn(command, [...args, "system", "service", "--time=0", `unix://${socketPath}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let log = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    if (log.length < 20_000) log += String(chunk);
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const killed = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(killed);
    }
    // Rootless Podman re-executes itself in a user namespace and keeps a pause process holding it:
    // both outlive the process started here. They are found by the runtime folder made for them.
    if (options.user) await endProcessesWithRuntime(join(folder, "run"));
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    await waitForService(socketPath, child, () => log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { host: `unix://${socketPath}`, socketPath, podman, stop };
}

/**
 * Puts Docker's copy of `image` into the service's image store (`docker save | podman load`) unless
 * the store already holds the same image (the same id).
 */
export function loadImageFromDocker(service: PodmanService, image: string): void {
  const wanted = execFileSync("docker", ["image", "inspect", "--format", "{{.Id}}", image], {
    encoding: "utf8",
  }).trim();
  const [command = "podman", ...args] = service.podman;
  let present = "";
  try {
    present = execFileSync(command, [...args, "image", "inspect", "--format", "{{.Id}}", image], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    // Not in the store yet.
  }
  if (wanted.replace(/^sha256:/, "") === present.replace(/^sha256:/, "")) return;
  const quoted = [command, ...args].map((part) => `'${part}'`).join(" ");
  execFileSync("bash", ["-o", "pipefail", "-c", `docker save '${image}' | ${quoted} load --quiet`], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 300_000,
  });
}
