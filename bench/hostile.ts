import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type Dockerode from "dockerode";
import { labelKeys } from "../packages/sandbox/src/container/labels.ts";
import { type HostileAttack, hostileAttacks } from "./hostile-programs.ts";

const run = promisify(execFile);
const childPath = fileURLToPath(new URL("./hostile-child.ts", import.meta.url));

export type HostileRun = {
  attack: HostileAttack;
  backend: "docker" | "gvisor";
  status: string;
  wallSeconds: number;
  cpuSeconds: number;
  rssGrowthBytes: number;
  /** The read-back of /workspace/out (an upper bound: the attempt's host time outside model, start and run). */
  collectSeconds: number;
  /** Growth of the run's containers' folders under Docker's data root (their own folder and their writable layer). */
  diskBytes: number;
  containersSeen: number;
};

/**
 * Docker's own metadata of a container, rewritten whole (same size) at each change of its state,
 * through a temporary copy (`.tmp-config.v2.json<random>`) renamed over it: a measure that falls
 * while that copy is half written would count up to 9 kB the program never wrote. Not counted.
 */
const dockerMetadata = ["config.v2.json", "hostconfig.json", ".tmp-*"];

/** Bytes in use under these folders (du, apparent sizes, Docker's metadata aside); 0 for a folder that is gone. */
async function folderBytes(folders: string[]): Promise<number> {
  let total = 0;
  const excluded = dockerMetadata.map((pattern) => `--exclude=${pattern}`);
  for (const folder of folders) {
    const { stdout } = await run("du", ["-sb", ...excluded, folder]).catch(() => ({ stdout: "0" }));
    total += Number(stdout.split("\t")[0]) || 0;
  }
  return total;
}

/**
 * Watches the containers a process owns (their owner-pid label) while it runs: each one's folders
 * under Docker's data root (containers/<id>, where a json-file log would grow, and its writable
 * layer), measured every 500 ms from when it runs; returns the sum over containers of (largest -
 * first measure).
 */
function watchDisk(docker: Dockerode, dataRoot: string, ownerPid: number) {
  const seen = new Map<string, { folders: string[]; first: number; largest: number }>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const containers = await docker
        .listContainers({ all: true, filters: { label: [`${labelKeys.ownerPid}=${ownerPid}`] } })
        .catch(() => []);
      for (const container of containers) {
        // From its start on: Docker rewrites its own metadata (config.v2.json) when a container starts.
        if (container.State !== "running" && !seen.has(container.Id)) continue;
        let entry = seen.get(container.Id);
        if (!entry) {
          const info = await docker
            .getContainer(container.Id)
            .inspect()
            .catch(() => undefined);
          const layer = (info?.GraphDriver?.Data as Record<string, string> | undefined)?.UpperDir;
          const folders = [`${dataRoot}/containers/${container.Id}`, ...(layer ? [layer] : [])];
          const first = await folderBytes(folders);
          entry = { folders, first, largest: first };
          seen.set(container.Id, entry);
        }
        entry.largest = Math.max(entry.largest, await folderBytes(entry.folders));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      const grown = [...seen.values()].reduce((sum, entry) => sum + (entry.largest - entry.first), 0);
      return { diskBytes: grown, containersSeen: seen.size };
    },
  };
}

/** Runs one attack in a child process under one runtime, watching its containers' disk use. */
async function hostileRun(options: {
  docker: Dockerode;
  dataRoot: string;
  attack: HostileAttack;
  backend: "docker" | "gvisor";
  execTimeout: number;
}): Promise<HostileRun> {
  const child = spawn(
    process.execPath,
    [childPath, options.backend, options.attack, String(options.execTimeout)],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const watcher = watchDisk(options.docker, options.dataRoot, child.pid ?? -1);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + String(chunk)).slice(-4000)));
  const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
  const disk = await watcher.stop();
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (exitCode !== 0 || !line.startsWith("{")) {
    throw new Error(
      `the hostile run (${options.attack}, ${options.backend}) failed: exit ${exitCode}: ${stderr}`,
    );
  }
  const report = JSON.parse(line) as Omit<HostileRun, "attack" | "backend" | "diskBytes" | "containersSeen">;
  return { attack: options.attack, backend: options.backend, ...report, ...disk };
}

/**
 * Each attack class of issue 18 through a real code-action turn (scripted model), under runc and
 * gVisor, one at a time: the host process's peak RSS growth and CPU seconds for the turn, and the
 * bytes its containers' folders under Docker's data root grew.
 */
export async function measureHostile(options: {
  docker: Dockerode;
  execTimeout: number;
  backends: Array<"docker" | "gvisor">;
  onProgress?: (message: string) => void;
}): Promise<HostileRun[]> {
  const dataRoot = String((await options.docker.info()).DockerRootDir);
  const runs: HostileRun[] = [];
  for (const backend of options.backends) {
    for (const attack of Object.keys(hostileAttacks) as HostileAttack[]) {
      const measured = await hostileRun({ ...options, dataRoot, attack, backend });
      runs.push(measured);
      options.onProgress?.(
        `hostile ${attack} (${backend}): ${measured.status}, ${measured.cpuSeconds.toFixed(2)} s CPU, ${(measured.rssGrowthBytes / 1024 ** 2).toFixed(1)} MiB, ${measured.diskBytes} B`,
      );
    }
  }
  return runs;
}
