import type Dockerode from "dockerode";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { containerActions } from "../test/container-actions.ts";
import { readAll } from "../test/read-all.ts";
import { connectDocker } from "./connection/connect-docker.ts";
import { labelKeys } from "./container/labels.ts";
import { SandboxManager } from "./manager.ts";

// The warm pool and the live-container bound against the real engine. No timings: what is checked is
// which containers exist, which serve whom, and how many are alive at once.

let docker: Dockerode;

beforeAll(async () => {
  ({ docker } = await connectDocker());
});

function containersOf(manager: SandboxManager): Promise<Dockerode.ContainerInfo[]> {
  return docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.managerId}=${manager.managerId}`] },
  });
}

async function exists(containerId: string): Promise<boolean> {
  try {
    await docker.getContainer(containerId).inspect();
    return true;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return false;
    throw error;
  }
}

/** Counts this manager's containers (any state) every 25 ms until stopped; returns the highest count. */
function watchLiveCount(manager: SandboxManager): { stop: () => Promise<number> } {
  let highest = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      highest = Math.max(highest, (await containersOf(manager)).length);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return highest;
    },
  };
}

describe("the warm pool", () => {
  const managers: SandboxManager[] = [];
  afterAll(async () => {
    await Promise.allSettled(managers.map((manager) => manager.cleanupAll()));
  });

  test("each pooled container serves one session only, untouched, with the warm command already running; shutdown leaves none", async () => {
    const manager = new SandboxManager({ pool: 2, maxConcurrent: 4 }, { warmCommand: ["cat"] });
    managers.push(manager);
    await manager.ready();
    const used: string[] = [];
    for (let run = 0; run < 4; run += 1) {
      const session = await manager.createSession();
      expect(used).not.toContain(session.containerId);
      used.push(session.containerId);
      // No program touched it: /workspace is empty.
      const listing = await session.execute("ls -A /workspace");
      expect(listing.stdout).toBe("");
      // The warm command runs before anyone spawns it: one `cat`, waiting (counted with the shell's
      // own `read`, so the count starts no process of its own).
      const before = await session.execute(
        'n=0; for f in /proc/[0-9]*/comm; do read -r c < "$f" 2>/dev/null && [ "$c" = cat ] && n=$((n+1)); done; echo $n',
      );
      expect(Number(before.stdout.trim())).toBe(1);
      const process = session.takeWarm()!.claim();
      const output = readAll(process.stdout);
      process.stderr.resume();
      process.stdin.end(`hello from run ${run}`);
      expect(await output).toBe(`hello from run ${run}`);
      expect((await process.exit).exitCode).toBe(0);
      await session.execute("touch /workspace/used");
      await session.destroy();
      // Destroyed, not returned to the pool.
      expect(await exists(session.containerId)).toBe(false);
    }
    expect(new Set(used).size).toBe(4);
    // The pool refills in the background; none of its containers is one that served a session.
    const pooled = (await containersOf(manager)).map((container) => container.Id);
    for (const id of pooled) expect(used).not.toContain(id);
    await manager.cleanupAll();
    expect(await containersOf(manager)).toEqual([]);
  });

  test("cleanupAll stops a warm container still starting: it is removed without ever being started", async () => {
    const manager = new SandboxManager({ pool: 1 });
    managers.push(manager);
    const since = Math.floor(Date.now() / 1000) - 1;
    // ready() ends by starting the fill, so the container's create is in flight when cleanupAll aborts it.
    await manager.ready();
    await manager.cleanupAll();
    expect(await containersOf(manager)).toEqual([]);
    const actions = await containerActions(docker, since, {
      label: [`${labelKeys.managerId}=${manager.managerId}`],
    });
    expect(actions).toContain("create");
    expect(actions).toContain("destroy");
    expect(actions).not.toContain("start");
  });

  test("a spawn starts a process of its own beside the waiting warm command", async () => {
    const manager = new SandboxManager({ pool: 1 }, { warmCommand: ["cat"] });
    managers.push(manager);
    await manager.ready();
    const session = await manager.createSession();
    const process = session.spawn(["sh", "-c", "echo other"]);
    process.stderr.resume();
    process.stdin.end();
    expect(await readAll(process.stdout)).toBe("other\n");
    await session.destroy();
    await manager.cleanupAll();
    expect(await containersOf(manager)).toEqual([]);
  });
});

describe("maxConcurrent", () => {
  const managers: SandboxManager[] = [];
  afterAll(async () => {
    await Promise.allSettled(managers.map((manager) => manager.cleanupAll()));
  });

  // Slots are granted in arrival order. With maxConcurrent 1 a session is only granted after the one
  // before it was served and released, so the order of service must be exactly the arrival order;
  // with 2, two containers start at once and either may be ready first, so only the set is checked.
  test.each([
    { pool: 0, maxConcurrent: 1 },
    { pool: 0, maxConcurrent: 2 },
    { pool: 2, maxConcurrent: 2 },
  ])(
    "maxConcurrent $maxConcurrent, pool $pool: 6 concurrent sessions never have more containers alive, and all succeed",
    async ({ pool, maxConcurrent }) => {
      const manager = new SandboxManager({ pool, maxConcurrent });
      managers.push(manager);
      await manager.ready();
      const watcher = watchLiveCount(manager);
      const served: number[] = [];
      const runs = Array.from({ length: 6 }, async (_, index) => {
        const session = await manager.createSession();
        served.push(index);
        const result = await session.execute(`sleep 0.3; echo ${index}`);
        await session.destroy();
        return result;
      });
      const results = await Promise.all(runs);
      const highest = await watcher.stop();
      expect(results.map((result) => result.stdout.trim())).toEqual(["0", "1", "2", "3", "4", "5"]);
      expect(results.every((result) => result.exitCode === 0)).toBe(true);
      if (maxConcurrent === 1) expect(served).toEqual([0, 1, 2, 3, 4, 5]);
      else expect([...served].sort()).toEqual([0, 1, 2, 3, 4, 5]);
      expect(highest).toBeGreaterThanOrEqual(1);
      expect(highest).toBeLessThanOrEqual(maxConcurrent);
      await manager.cleanupAll();
      expect(await containersOf(manager)).toEqual([]);
    },
  );
});
