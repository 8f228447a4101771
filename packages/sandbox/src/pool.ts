import type { Logger } from "pino";
import { SandboxError } from "./errors/sandbox-error.ts";

export type ContainerPoolOptions<Item> = {
  /** Warm containers kept ready (0: none; every request then starts its own container). */
  size: number;
  /** Live containers at most: handed out, idle in the pool, being started and being removed. */
  maxConcurrent: number;
  /**
   * Starts one container (created, started, flags read back). Rejects when it cannot. `signal`
   * aborts when the pool is drained: the start may then stop early, remove what it made and reject.
   */
  create: (signal: AbortSignal) => Promise<Item>;
  /** Removes a container that was never handed out. */
  discard: (item: Item) => Promise<void>;
  /** Whether an idle container may still be handed out (alive, and far enough from its deadline). */
  usable: (item: Item) => boolean;
  logger?: Logger;
  /** First wait before filling again after a failed fill; doubles up to 30 s. Default 1000 ms. */
  retryDelayMs?: number;
  /** How often idle containers are checked and replaced when no longer usable. Default 30 s. */
  checkIntervalMs?: number;
  /**
   * After this long with no `take`, the idle containers are removed and the pool stops refilling
   * until the next `take` (which refills it). Undefined: the pool stays full.
   */
  idleDrainMs?: number;
};

/** A slot for a container the caller starts itself; call `release` once that container is gone. */
export type PoolSlot = { release: () => void };

type Waiter<Item> =
  | { kind: "take"; resolve: (item: Item) => void; reject: (error: unknown) => void }
  | { kind: "slot"; resolve: (slot: PoolSlot) => void; reject: (error: unknown) => void };

/** The warm pool at a glance (`manager.poolStatus()`). */
export type PoolStatus = {
  /** Warm containers waiting to be handed out. */
  idle: number;
  /** The pool was drained after an idle period and refills at the next request for a container. */
  asleep: boolean;
  /** Containers being started (pool fills and on-demand starts). */
  starting: number;
  /** Every live container counted against maxConcurrent. */
  live: number;
  /** Requests waiting in line. */
  waiting: number;
};

const maximumRetryDelayMs = 30_000;

/**
 * Hands out fresh containers, each to one caller only, and bounds how many are alive at once.
 *
 * Requests (`take` for a warm container, `reserve` for a slot to start one directly) are served in
 * the order they arrive and never fail because of load: they wait. With `size` > 0, `size` warm
 * containers are started ahead of need and refilled in the background whenever nobody is waiting
 * and a slot is free. A container is never returned to the pool: the caller destroys it and calls
 * `release`. A failed fill is logged and retried later; a failed start made for a waiting `take`
 * rejects that request, so the caller sees the error.
 */
export class ContainerPool<Item> {
  readonly size: number;
  readonly maxConcurrent: number;
  private readonly options: ContainerPoolOptions<Item>;
  private readonly idle: Item[] = [];
  private readonly waiters: Array<Waiter<Item>> = [];
  private readonly starts = new Set<Promise<void>>();
  private readonly removals = new Set<Promise<void>>();
  private live = 0;
  private fills = 0;
  /** Containers started elsewhere being taken over (`adopt`): counted as fills, handed out first. */
  private adopting = 0;
  private demands = 0;
  private retryDelayMs: number;
  private retryAt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;
  private idleDrainTimer: NodeJS.Timeout | undefined;
  private asleep = false;
  private drained = false;
  /** Aborted by `drain`: starts in flight stop instead of finishing a container nobody will use. */
  private readonly draining = new AbortController();

  constructor(options: ContainerPoolOptions<Item>) {
    if (!Number.isInteger(options.size) || options.size < 0)
      throw new RangeError("size must be an integer >= 0");
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1) {
      throw new RangeError("maxConcurrent must be an integer >= 1");
    }
    this.options = options;
    this.size = options.size;
    this.maxConcurrent = options.maxConcurrent;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    if (options.idleDrainMs !== undefined && !(options.idleDrainMs > 0)) {
      throw new RangeError("idleDrainMs must be > 0");
    }
  }

  status(): PoolStatus {
    return {
      idle: this.idle.length,
      asleep: this.asleep,
      starting: this.fills + this.demands,
      live: this.live,
      waiting: this.waiters.length,
    };
  }

  /** Starts filling the pool (nothing happens with size 0). Idempotent. */
  start(): void {
    if (this.drained || this.size === 0) return;
    if (!this.checkTimer) {
      this.checkTimer = setInterval(() => this.checkIdle(), this.options.checkIntervalMs ?? 30_000);
      this.checkTimer.unref();
    }
    this.armIdleDrain();
    this.pump();
  }

  /**
   * Takes in one container started elsewhere (a prelaunch's), made ready by `create`: it is the
   * pool's first item, handed out before any other whatever `size` is, counted against
   * `maxConcurrent` while it is taken over, and never refilled as such (with `size` > 0 it counts as
   * one of the fills). `create` resolving undefined (the container could not be used) leaves
   * nothing; the fills and requests then start their own.
   */
  adopt(create: (signal: AbortSignal) => Promise<Item | undefined>): void {
    if (this.drained) return;
    this.live += 1;
    this.adopting += 1;
    const adopted = (async () => {
      const item = await create(this.draining.signal).catch(() => undefined);
      this.adopting -= 1;
      if (item === undefined) {
        this.live -= 1;
      } else if (this.drained) {
        this.remove(item);
        return;
      } else {
        this.idle.unshift(item);
      }
      this.pump();
    })();
    this.starts.add(adopted);
    void adopted.finally(() => this.starts.delete(adopted));
  }

  /**
   * Whether `take` is served from what the pool holds: it keeps warm containers (`size` > 0), or
   * has one idle or being adopted. Otherwise a request starts its own container in a `reserve` slot.
   */
  get offers(): boolean {
    return this.size > 0 || this.idle.length > 0 || this.adopting > 0;
  }

  /**
   * A warm container for one caller, in arrival order. The caller destroys it, then calls `release`.
   * When `signal` aborts first, the request leaves the line at once and rejects with its reason.
   */
  take(signal?: AbortSignal): Promise<Item> {
    this.asleep = false;
    this.armIdleDrain();
    return this.enqueue<Item>((resolve, reject) => ({ kind: "take", resolve, reject }), signal);
  }

  /**
   * Waits, in arrival order, for room for one more live container that the caller starts itself.
   * When `signal` aborts first, the request leaves the line at once and rejects with its reason.
   */
  reserve(signal?: AbortSignal): Promise<PoolSlot> {
    return this.enqueue<PoolSlot>((resolve, reject) => ({ kind: "slot", resolve, reject }), signal);
  }

  /** A container handed out by `take` is gone: its slot is free again. */
  release(): void {
    this.live -= 1;
    this.pump();
  }

  /**
   * Stops filling, removes the idle containers, stops the starts in flight (each removes what it
   * made) and waits for them, and rejects requests still waiting. Later requests still work,
   * without a pool.
   */
  async drain(): Promise<void> {
    this.drained = true;
    this.draining.abort(new SandboxError("The warm pool was drained.", { code: "manager-closed" }));
    clearInterval(this.checkTimer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.idleDrainTimer);
    this.checkTimer = undefined;
    const error = new SandboxError(
      "The sandbox manager was cleaned up while this request waited for a container.",
      {
        code: "manager-closed",
      },
    );
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
    for (const item of this.idle.splice(0)) this.remove(item);
    while (this.starts.size > 0 || this.removals.size > 0) {
      await Promise.allSettled([...this.starts, ...this.removals]);
    }
  }

  private enqueue<Value>(
    make: (resolve: (value: Value) => void, reject: (error: unknown) => void) => Waiter<Item>,
    signal?: AbortSignal,
  ): Promise<Value> {
    return new Promise<Value>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index === -1) return;
        this.waiters.splice(index, 1);
        reject(signal?.reason);
        // The line moved: the next request may be served now, and a start made for this one
        // becomes an idle container for the next taker.
        this.pump();
      };
      const done = () => signal?.removeEventListener("abort", onAbort);
      const waiter = make(
        (value) => {
          done();
          resolve(value);
        },
        (error) => {
          done();
          reject(error);
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump();
    });
  }

  /** Serves the head of the line while it can, starts what the line needs, then refills the pool. */
  private pump(): void {
    while (this.waiters.length > 0) {
      const head = this.waiters[0]!;
      if (head.kind === "take") {
        const item = this.takeIdle();
        if (item === undefined) break;
        this.waiters.shift();
        head.resolve(item);
        continue;
      }
      if (this.live < this.maxConcurrent) {
        this.live += 1;
        this.waiters.shift();
        head.resolve(this.slot());
        continue;
      }
      // The head needs a slot and every slot is taken: an idle warm container gives up its place.
      const idle = this.idle.shift();
      if (idle !== undefined) this.remove(idle);
      break;
    }
    // Takers at the front of the line that no container already starting will serve.
    let takers = 0;
    for (const waiter of this.waiters) {
      if (waiter.kind !== "take") break;
      takers += 1;
    }
    while (takers > this.fills + this.adopting + this.demands && this.live < this.maxConcurrent) {
      this.launch("demand");
    }
    if (this.drained || this.waiters.length > 0) return;
    const now = Date.now();
    if (now < this.retryAt) {
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        this.pump();
      }, this.retryAt - now).unref();
      return;
    }
    if (this.asleep) return;
    while (this.idle.length + this.fills + this.adopting < this.size && this.live < this.maxConcurrent) {
      this.launch("fill");
    }
  }

  /** (Re)starts the idle period: when it passes with no `take`, the pool sleeps. */
  private armIdleDrain(): void {
    const idleDrainMs = this.options.idleDrainMs;
    if (idleDrainMs === undefined || this.drained || this.size === 0) return;
    clearTimeout(this.idleDrainTimer);
    this.idleDrainTimer = setTimeout(() => this.sleep(), idleDrainMs);
    this.idleDrainTimer.unref();
  }

  /** Removes the idle containers (and those still starting, once started) and stops refilling. */
  private sleep(): void {
    this.idleDrainTimer = undefined;
    if (this.drained) return;
    this.asleep = true;
    this.options.logger?.debug({ idle: this.idle.length }, "warm pool idle: removing its containers");
    for (const item of this.idle.splice(0)) this.remove(item);
  }

  private slot(): PoolSlot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.release();
      },
    };
  }

  /** The first idle container still usable; unusable ones are removed on the way. */
  private takeIdle(): Item | undefined {
    for (;;) {
      const item = this.idle.shift();
      if (item === undefined) return undefined;
      if (this.isUsable(item)) return item;
      this.options.logger?.debug("an idle pool container is no longer usable; removing it");
      this.remove(item);
    }
  }

  private isUsable(item: Item): boolean {
    try {
      return this.options.usable(item);
    } catch {
      return false;
    }
  }

  private checkIdle(): void {
    const keep = this.idle.filter((item) => this.isUsable(item));
    const stale = this.idle.filter((item) => !keep.includes(item));
    if (stale.length === 0) return;
    this.idle.splice(0, this.idle.length, ...keep);
    for (const item of stale) this.remove(item);
    this.pump();
  }

  private launch(reason: "fill" | "demand"): void {
    this.live += 1;
    if (reason === "fill") this.fills += 1;
    else this.demands += 1;
    const started = (async () => {
      const outcome = await this.options.create(this.draining.signal).then(
        (item) => ({ ok: true as const, item }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      if (reason === "fill") this.fills -= 1;
      else this.demands -= 1;
      if (!outcome.ok) {
        this.live -= 1;
        this.onLaunchFailed(reason, outcome.error);
        return;
      }
      const item = outcome.item;
      if ((this.drained || this.asleep) && !this.waiters.some((waiter) => waiter.kind === "take")) {
        this.remove(item);
        return;
      }
      this.retryDelayMs = this.options.retryDelayMs ?? 1000;
      this.idle.push(item);
      this.pump();
    })();
    this.starts.add(started);
    void started.finally(() => this.starts.delete(started));
  }

  private onLaunchFailed(reason: "fill" | "demand", error: unknown): void {
    if (reason === "demand") {
      const index = this.waiters.findIndex((waiter) => waiter.kind === "take");
      const [waiter] = index >= 0 ? this.waiters.splice(index, 1) : [];
      waiter?.reject(error);
    } else {
      this.options.logger?.warn(
        { error, retryInMs: this.retryDelayMs },
        "could not start a warm pool container; requests start their own until a fill works",
      );
      this.retryAt = Date.now() + this.retryDelayMs;
      this.retryDelayMs = Math.min(this.retryDelayMs * 2, maximumRetryDelayMs);
    }
    this.pump();
  }

  /** Removes a container that was never handed out; its slot frees once it is gone. */
  private remove(item: Item): void {
    const removal = this.options
      .discard(item)
      .catch((error: unknown) => {
        this.options.logger?.warn({ error }, "could not remove a pool container; the sweep will");
      })
      .finally(() => {
        this.removals.delete(removal);
        this.release();
      });
    this.removals.add(removal);
  }
}
