import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectDocker } from "./connection/connect-docker.ts";
import { labelKeys } from "./container/labels.ts";
import { SandboxManager } from "./manager.ts";

// The warm pool's copy limit against the real engine (`poolCopyLimit`): data files that add up to
// more than it skip the warm container (which could only take them by copy) for a container of the
// session's own that mounts them; smaller ones take the warm container, copied.

let folder: string;
let small: string;
let big: string;

beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), "codeaction-pool-copy-limit-"));
  // The mount check wants a file others may read (the sandbox's user is one of them).
  chmodSync(folder, 0o755);
  small = join(folder, "small.csv");
  big = join(folder, "big.csv");
  writeFileSync(small, "id\n1\n");
  writeFileSync(big, `id\n${"1\n".repeat(600 * 1024)}`);
  chmodSync(small, 0o644);
  chmodSync(big, 0o644);
});

afterAll(() => rmSync(folder, { recursive: true, force: true }));

/**
 * Waits until the pool holds its idle warm container (no timing asserted: it only waits), and
 * returns that container's id: the manager's only container then.
 */
async function warmContainer(manager: SandboxManager): Promise<string> {
  while (manager.poolStatus().idle < 1) await new Promise((resolve) => setTimeout(resolve, 50));
  const { docker } = await connectDocker();
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.managerId}=${manager.managerId}`] },
  });
  expect(containers).toHaveLength(1);
  return containers[0]!.Id;
}

describe("the warm pool's copy limit", () => {
  const managers: SandboxManager[] = [];
  afterAll(async () => {
    await Promise.allSettled(managers.map((manager) => manager.close()));
  });

  test("files over poolCopyLimit get a container of their own, mounted; files within it take the warm one, copied", async () => {
    const manager = new SandboxManager({ pool: 1, poolCopyLimit: "1M" }, { warmCommand: ["cat"] });
    managers.push(manager);
    await manager.ready();
    const warm = await warmContainer(manager);
    const over = await manager.createSession({ mountFiles: [big] });
    try {
      // The warm container is still idle: the session did not take it.
      expect(over.containerId).not.toBe(warm);
      expect(manager.poolStatus().idle).toBe(1);
      expect(await over.placeFiles([big])).toEqual([
        { containerPath: "/workspace/data/big.csv", bytes: 2 * 600 * 1024 + 3, how: "mounted" },
      ]);
    } finally {
      await over.close();
    }
    const within = await manager.createSession({ mountFiles: [small] });
    try {
      expect(within.containerId).toBe(warm);
      expect(await within.placeFiles([small])).toEqual([
        { containerPath: "/workspace/data/small.csv", bytes: 5, how: "copied" },
      ]);
    } finally {
      await within.close();
    }
  });

  test("by default (32M) a file of a few MiB is copied into the warm container", async () => {
    const manager = new SandboxManager({ pool: 1 }, { warmCommand: ["cat"] });
    managers.push(manager);
    await manager.ready();
    const warm = await warmContainer(manager);
    const session = await manager.createSession({ mountFiles: [big] });
    try {
      expect(session.containerId).toBe(warm);
      expect(await session.placeFiles([big])).toEqual([
        { containerPath: "/workspace/data/big.csv", bytes: 2 * 600 * 1024 + 3, how: "copied" },
      ]);
    } finally {
      await session.close();
    }
  });
});
