import { readFile } from "node:fs/promises";
import type Dockerode from "dockerode";
import { labelKeys } from "../packages/sandbox/src/container/labels.ts";

/** The containers this benchmark process owns (every sandbox container is labelled with its owner's pid). */
export async function ownContainers(docker: Dockerode): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] } });
}

const delay = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Waits until this process owns exactly `expected` containers, all running and ready: pending
 * removals are done and warm pools are full again (a warm container is ready when its two execs,
 * the kill helper and the waiting relay, run). Gives up after `timeoutMs` (the next measurement then
 * starts anyway).
 */
export async function settle(
  docker: Dockerode,
  options: { expected: number; timeoutMs?: number },
): Promise<boolean> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    const containers = await ownContainers(docker);
    if (
      containers.length === options.expected &&
      containers.every((container) => container.State === "running")
    ) {
      const execs = await Promise.all(
        containers.map((container) =>
          docker
            .getContainer(container.Id)
            .inspect()
            .then((info) => (info as { ExecIDs?: string[] | null }).ExecIDs?.length ?? 0)
            .catch(() => 0),
        ),
      );
      if (execs.every((count) => count >= 2)) {
        await delay(50);
        return true;
      }
    }
    await delay(50);
  }
  return false;
}

/** The memory cgroup's usage of one container (cgroup v1, then v2), or undefined when unreadable. */
export async function containerMemoryBytes(containerId: string): Promise<number | undefined> {
  const paths = [
    `/sys/fs/cgroup/memory/docker/${containerId}/memory.usage_in_bytes`,
    `/sys/fs/cgroup/system.slice/docker-${containerId}.scope/memory.current`,
  ];
  for (const path of paths) {
    try {
      return Number((await readFile(path, "utf8")).trim());
    } catch {
      // try the next layout
    }
  }
  return undefined;
}

/** MemAvailable from /proc/meminfo, in bytes. */
export async function hostAvailableBytes(): Promise<number> {
  const text = await readFile("/proc/meminfo", "utf8");
  const match = /^MemAvailable:\s+(\d+) kB$/m.exec(text);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}
