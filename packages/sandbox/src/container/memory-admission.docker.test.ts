import type Dockerode from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { connectDocker } from "../connection/connect-docker.ts";
import { SandboxManager } from "../manager.ts";
import { labelKeys } from "./labels.ts";

// maxTotalMemory against the real engine: the memory limits the engine reports for a manager's
// live containers never add up to more than the budget; a session past it waits for room.

let docker: Dockerode;
beforeAll(async () => {
  ({ docker } = await connectDocker());
});

/** The memory limit (bytes) the engine reports for each of the manager's containers. */
async function memoryLimitsOf(manager: SandboxManager): Promise<number[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.managerId}=${manager.managerId}`] },
  });
  return Promise.all(
    containers.map(async (container) => {
      const inspected = await docker.getContainer(container.Id).inspect();
      return inspected.HostConfig.Memory ?? 0;
    }),
  );
}

describe("maxTotalMemory on the real engine", () => {
  it("keeps the sum of live containers' memory limits within it: a third 64M session waits under 128M", async () => {
    await using manager = new SandboxManager({
      pool: 0,
      maxConcurrent: 4,
      memoryLimit: "64M",
      maxTotalMemory: "128M",
    });
    await manager.ready();
    const requests = [manager.createSession(), manager.createSession(), manager.createSession()];
    const served: number[] = [];
    requests.forEach((request, index) => void request.then(() => served.push(index)));
    await expect.poll(() => served.length, { timeout: 60_000 }).toBe(2);
    expect(manager.poolStatus()).toMatchObject({ live: 2, waiting: 1 });
    const limits = await memoryLimitsOf(manager);
    expect(limits).toEqual([64 * 1024 ** 2, 64 * 1024 ** 2]);

    const first = await requests[served[0]!]!;
    await first.destroy();
    await expect.poll(() => served.length, { timeout: 60_000 }).toBe(3);
    const third = await requests.find((_request, index) => !served.slice(0, 2).includes(index))!;
    const result = await third.execute(
      "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    );
    expect(result.stdout.trim()).toBe(String(64 * 1024 ** 2));
    expect((await memoryLimitsOf(manager)).reduce((sum, limit) => sum + limit, 0)).toBeLessThanOrEqual(
      128 * 1024 ** 2,
    );
    for (const request of requests) await (await request).destroy();
  });
});
