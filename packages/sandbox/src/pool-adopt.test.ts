import { describe, expect, test } from "vitest";
import { ContainerPool } from "./pool.ts";

// `adopt`: a container started elsewhere (a prelaunch's) as the pool's first item, with stand-in
// containers. Through the manager with a fake engine: prelaunch/take-over.test.ts.

type Fake = { id: string };

function deferred<Value>() {
  let resolve!: (value: Value) => void;
  const promise = new Promise<Value>((done) => (resolve = done));
  return { promise, resolve };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function poolOf(size: number, maxConcurrent = 4) {
  const created: string[] = [];
  const discarded: string[] = [];
  const pool = new ContainerPool<Fake>({
    size,
    maxConcurrent,
    create: async () => {
      const fake = { id: `started-${created.length + 1}` };
      created.push(fake.id);
      return fake;
    },
    discard: async (fake) => {
      discarded.push(fake.id);
    },
    usable: () => true,
  });
  return { pool, created, discarded };
}

describe("ContainerPool.adopt", () => {
  test("without a warm pool, the adopted container serves the first take and is not refilled", async () => {
    const { pool, created } = poolOf(0);
    const adopted = deferred<Fake | undefined>();
    pool.adopt(() => adopted.promise);
    expect(pool.offers).toBe(true);
    expect(pool.status()).toMatchObject({ live: 1 });
    const taking = pool.take();
    adopted.resolve({ id: "prelaunched" });
    expect(await taking).toEqual({ id: "prelaunched" });
    await flush();
    expect(created).toEqual([]);
    expect(pool.offers).toBe(false);
    pool.release();
    expect(pool.status()).toMatchObject({ live: 0, idle: 0 });
    await pool.drain();
  });

  test("a take waiting while the adoption fails gets a container started for it", async () => {
    const { pool, created } = poolOf(0);
    const adopted = deferred<Fake | undefined>();
    pool.adopt(() => adopted.promise);
    const taking = pool.take();
    await flush();
    // While the adoption runs, nothing else is started for the request.
    expect(created).toEqual([]);
    adopted.resolve(undefined);
    expect(await taking).toEqual({ id: "started-1" });
    expect(pool.status()).toMatchObject({ live: 1 });
    await pool.drain();
  });

  test("with a warm pool, the adopted container counts as one of its fills and is handed out first", async () => {
    const { pool, created } = poolOf(2);
    const adopted = deferred<Fake | undefined>();
    pool.adopt(() => adopted.promise);
    pool.start();
    await flush();
    expect(created).toEqual(["started-1"]);
    adopted.resolve({ id: "prelaunched" });
    await flush();
    expect(pool.status()).toMatchObject({ idle: 2, live: 2 });
    expect(await pool.take()).toEqual({ id: "prelaunched" });
    await pool.drain();
  });

  test("a container adopted after the pool was drained is removed", async () => {
    const { pool, discarded } = poolOf(0);
    const adopted = deferred<Fake | undefined>();
    let signalOfAdoption: AbortSignal | undefined;
    pool.adopt((signal) => {
      signalOfAdoption = signal;
      return adopted.promise;
    });
    const draining = pool.drain();
    expect(signalOfAdoption?.aborted).toBe(true);
    adopted.resolve({ id: "prelaunched" });
    await draining;
    expect(discarded).toEqual(["prelaunched"]);
    expect(pool.status()).toMatchObject({ live: 0 });
  });
});
