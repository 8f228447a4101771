import { describe, expect, test, vi } from "vitest";
import { ContainerPool, type ContainerPoolOptions } from "./pool.ts";

// The pool's bookkeeping with stand-in containers: ordering, the live bound, discards, failures.
// (pool.docker.test.ts proves the same promises with real containers.)

type Fake = { id: number; usable: boolean };

function deferred<Value>() {
  let resolve!: (value: Value) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<Value>((done, fail) => {
    resolve = done;
    reject = fail;
  });
  return { promise, resolve, reject };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function fakePool(options: Partial<ContainerPoolOptions<Fake>> & { size: number; maxConcurrent: number }) {
  let next = 0;
  const created: Fake[] = [];
  const discarded: Fake[] = [];
  const pool = new ContainerPool<Fake>({
    create: async () => {
      next += 1;
      const fake = { id: next, usable: true };
      created.push(fake);
      return fake;
    },
    discard: async (fake) => {
      discarded.push(fake);
    },
    usable: (fake) => fake.usable,
    ...options,
  });
  return { pool, created, discarded };
}

describe("ContainerPool", () => {
  test("fills to its size ahead of need and refills after a take, never handing a container out twice", async () => {
    const { pool, created } = fakePool({ size: 2, maxConcurrent: 4 });
    pool.start();
    await flush();
    expect(pool.status()).toMatchObject({ idle: 2, live: 2 });
    const handed: number[] = [];
    for (let index = 0; index < 5; index += 1) {
      const fake = await pool.take();
      handed.push(fake.id);
      pool.release();
      await flush();
    }
    expect(new Set(handed).size).toBe(5);
    expect(created.length).toBe(7);
    expect(pool.status()).toMatchObject({ idle: 2, live: 2 });
    await pool.drain();
  });

  test("drain stops the starts in flight through their signal instead of waiting for them to finish", async () => {
    const signals: AbortSignal[] = [];
    const pool = new ContainerPool<Fake>({
      size: 2,
      maxConcurrent: 2,
      // A start that would never end on its own: only the drain's signal ends it.
      create: (signal) =>
        new Promise<Fake>((_, reject) => {
          signals.push(signal);
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        }),
      discard: async () => undefined,
      usable: () => true,
    });
    pool.start();
    await flush();
    expect(pool.status()).toMatchObject({ starting: 2, live: 2 });
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
    await pool.drain();
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(pool.status()).toMatchObject({ starting: 0, live: 0, idle: 0 });
  });

  test("never has more than maxConcurrent live, and serves waiting requests in arrival order", async () => {
    const { pool } = fakePool({ size: 0, maxConcurrent: 2 });
    const order: number[] = [];
    const slots = Array.from({ length: 5 }, (_, index) =>
      pool.reserve().then((slot) => {
        order.push(index);
        return slot;
      }),
    );
    await flush();
    expect(order).toEqual([0, 1]);
    expect(pool.status()).toMatchObject({ live: 2, waiting: 3 });
    (await slots[0]!).release();
    await flush();
    expect(order).toEqual([0, 1, 2]);
    (await slots[2]!).release();
    (await slots[1]!).release();
    await flush();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(pool.status().live).toBe(2);
    await pool.drain();
  });

  test("an aborted request leaves the line at once: it rejects with the reason and the next one is served in its place", async () => {
    const { pool, created } = fakePool({ size: 0, maxConcurrent: 1 });
    const first = await pool.reserve();
    const controller = new AbortController();
    const aborted = pool.reserve(controller.signal);
    const after = pool.reserve();
    await flush();
    expect(pool.status()).toMatchObject({ live: 1, waiting: 2 });
    controller.abort(new Error("client gone"));
    await expect(aborted).rejects.toThrow("client gone");
    expect(pool.status()).toMatchObject({ live: 1, waiting: 1 });
    first.release();
    (await after).release();
    expect(pool.status()).toMatchObject({ live: 0, waiting: 0 });
    // A signal aborted before the call never joins the line; a take leaves it like a reserve.
    await expect(pool.reserve(AbortSignal.abort(new Error("already")))).rejects.toThrow("already");
    const blocker = await pool.reserve();
    const takeController = new AbortController();
    const take = pool.take(takeController.signal);
    await flush();
    takeController.abort(new Error("take gone"));
    await expect(take).rejects.toThrow("take gone");
    expect(pool.status().waiting).toBe(0);
    blocker.release();
    expect(created).toEqual([]);
    await pool.drain();
  });

  test("counts idle warm containers as live: a direct request makes an idle one give up its place", async () => {
    const { pool, discarded } = fakePool({ size: 2, maxConcurrent: 2 });
    pool.start();
    await flush();
    expect(pool.status()).toMatchObject({ idle: 2, live: 2 });
    const slot = await pool.reserve();
    expect(discarded.length).toBe(1);
    expect(pool.status()).toMatchObject({ idle: 1, live: 2 });
    slot.release();
    await pool.drain();
  });

  test("an idle container that is no longer usable is removed and never handed out", async () => {
    const { pool, created, discarded } = fakePool({ size: 1, maxConcurrent: 2 });
    pool.start();
    await flush();
    created[0]!.usable = false;
    const fake = await pool.take();
    expect(fake.id).not.toBe(created[0]!.id);
    expect(discarded.map((item) => item.id)).toEqual([created[0]!.id]);
    pool.release();
    await pool.drain();
  });

  test("a failed fill is logged, not thrown; a waiting take gets a start of its own, whose error it sees", async () => {
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args), debug: () => undefined };
    const attempts: Array<ReturnType<typeof deferred<Fake>>> = [];
    const pool = new ContainerPool<Fake>({
      size: 1,
      maxConcurrent: 3,
      create: () => {
        const attempt = deferred<Fake>();
        attempts.push(attempt);
        return attempt.promise;
      },
      discard: async () => undefined,
      usable: () => true,
      retryDelayMs: 60_000,
      logger: logger as never,
    });
    pool.start();
    expect(attempts.length).toBe(1);
    attempts[0]!.reject(new Error("the image is gone"));
    await flush();
    expect(warnings.length).toBe(1);
    expect(pool.status()).toMatchObject({ live: 0, idle: 0 });
    const taken = pool.take();
    await flush();
    expect(attempts.length).toBe(2);
    attempts[1]!.reject(new Error("the image is still gone"));
    await expect(taken).rejects.toThrow("the image is still gone");
    expect(pool.status()).toMatchObject({ live: 0, waiting: 0 });
    await pool.drain();
  });

  test("drain removes the idle containers, waits for starts in flight and removes what they start", async () => {
    const attempts: Array<ReturnType<typeof deferred<Fake>>> = [];
    const discarded: number[] = [];
    const pool = new ContainerPool<Fake>({
      size: 2,
      maxConcurrent: 4,
      create: () => {
        const attempt = deferred<Fake>();
        attempts.push(attempt);
        return attempt.promise;
      },
      discard: async (fake) => {
        discarded.push(fake.id);
      },
      usable: () => true,
    });
    pool.start();
    attempts[0]!.resolve({ id: 1, usable: true });
    await flush();
    let drained = false;
    const draining = pool.drain().then(() => {
      drained = true;
    });
    await flush();
    expect(drained).toBe(false);
    attempts[1]!.resolve({ id: 2, usable: true });
    await draining;
    expect(discarded.sort()).toEqual([1, 2]);
    expect(pool.status()).toMatchObject({ live: 0, idle: 0, starting: 0 });
  });

  test("a request still waiting when the pool drains is rejected with a stable code", async () => {
    const { pool } = fakePool({ size: 0, maxConcurrent: 1 });
    const first = await pool.reserve();
    const second = pool.reserve();
    await pool.drain();
    await expect(second).rejects.toMatchObject({ code: "manager-closed" });
    first.release();
  });

  test("after its idle period with no take the pool removes its containers and sleeps; the next take refills it", async () => {
    vi.useFakeTimers();
    try {
      const { pool, created, discarded } = fakePool({ size: 2, maxConcurrent: 4, idleDrainMs: 60_000 });
      pool.start();
      await vi.advanceTimersByTimeAsync(0);
      expect(pool.status()).toMatchObject({ idle: 2, live: 2, asleep: false });
      // A take restarts the idle period.
      await vi.advanceTimersByTimeAsync(40_000);
      const first = await pool.take();
      pool.release();
      await vi.advanceTimersByTimeAsync(40_000);
      expect(pool.status()).toMatchObject({ idle: 2, asleep: false });
      await vi.advanceTimersByTimeAsync(20_000);
      expect(pool.status()).toMatchObject({ idle: 0, live: 0, asleep: true });
      expect(discarded.map((fake) => fake.id).sort()).toEqual([2, 3]);
      // Asleep, nothing refills (not even on the periodic check).
      await vi.advanceTimersByTimeAsync(120_000);
      expect(created).toHaveLength(3);
      const second = await pool.take();
      expect([first.id, second.id]).toEqual([1, 4]);
      await vi.advanceTimersByTimeAsync(0);
      expect(pool.status()).toMatchObject({ idle: 2, asleep: false });
      pool.release();
      await pool.drain();
    } finally {
      vi.useRealTimers();
    }
  });

  test("a container that finishes starting while the pool sleeps is removed, not kept", async () => {
    vi.useFakeTimers();
    try {
      const pending = deferred<Fake>();
      const discarded: number[] = [];
      const pool = new ContainerPool<Fake>({
        size: 1,
        maxConcurrent: 2,
        idleDrainMs: 1000,
        create: () => pending.promise,
        discard: async (fake) => {
          discarded.push(fake.id);
        },
        usable: () => true,
      });
      pool.start();
      await vi.advanceTimersByTimeAsync(1000);
      expect(pool.status()).toMatchObject({ asleep: true, starting: 1 });
      pending.resolve({ id: 7, usable: true });
      await vi.advanceTimersByTimeAsync(0);
      expect(discarded).toEqual([7]);
      expect(pool.status()).toMatchObject({ idle: 0, live: 0 });
      await pool.drain();
    } finally {
      vi.useRealTimers();
    }
  });
});
