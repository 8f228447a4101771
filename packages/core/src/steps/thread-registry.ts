import type { Logger } from "pino";
import { ThreadError } from "../errors/thread-error.ts";
import type { TurnContext } from "../turn/turn-context.ts";
import { StepSpace } from "./step-space.ts";
import type { ThreadStoreAccess } from "./thread-records.ts";

/** What a run with state "thread" holds while it runs: its thread's space, given back at the end. */
export type ThreadLease = {
  threadId: string;
  space: StepSpace;
  release(context: TurnContext): Promise<void>;
};

/** Stopped threads whose loss is remembered, to tell the model on their next question. */
const maxLostThreads = 1024;

/** A thread id: what `configurable.thread_id` may be (it also names the thread's stored history). */
const threadIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

type ThreadEntry = {
  space: StepSpace;
  /** Runs on this thread go one at a time: each waits for the one before. */
  queue: Promise<void>;
  leased: number;
  idleTimer?: NodeJS.Timeout | undefined;
};

/**
 * The live threads of one agent (codeAction.state "thread"): one StepSpace, so one interpreter and
 * its history, per thread id. At most `maxThreads` are live: using one more evicts the least
 * recently used idle one (its container stops; its history stays in the store); an interpreter
 * unused for `idleSeconds` stops the same way. A thread that is not live is restored on its next
 * question from the store (re-executing its history), or starts afresh, the model told why.
 */
export class ThreadRegistry {
  readonly #threads = new Map<string, ThreadEntry>();
  /**
   * Threads stopped without a store to restore them from, and why: their next question starts
   * afresh and the model is told (the oldest forgotten past maxLostThreads).
   */
  readonly #lost = new Map<string, string>();
  readonly #options: { maxThreads: number; idleSeconds: number; store?: ThreadStoreAccess; logger?: Logger };
  #closed = false;

  constructor(options: {
    maxThreads: number;
    idleSeconds: number;
    store?: ThreadStoreAccess;
    logger?: Logger;
  }) {
    this.#options = options;
  }

  /** Waits for the thread (runs on one thread go one at a time), then hands out its space. */
  async lease(threadId: string, context: TurnContext): Promise<ThreadLease> {
    if (this.#closed)
      throw new ThreadError({
        reason: "closed",
        message: "this agent was closed; build a new one",
        threadId,
      });
    const entry = await this.#entry(threadId);
    const before = entry.queue;
    let done!: () => void;
    entry.queue = new Promise<void>((resolve) => {
      done = resolve;
    });
    entry.leased += 1;
    clearTimeout(entry.idleTimer);
    await before;
    this.#touch(threadId, entry, context);
    return {
      threadId,
      space: entry.space,
      // The history is saved before the run's answer is given: a process that ends right after
      // its answer leaves the thread whole in the store.
      release: async (releasing) => {
        try {
          await this.#options.store?.save(threadId, entry.space);
        } catch (error) {
          this.#options.logger?.warn({ error, threadId }, "could not save a thread's history");
        } finally {
          entry.leased -= 1;
          this.#idleLater(threadId, entry, releasing);
          done();
        }
      },
    };
  }

  /** Starts `toId` from `fromId`'s history: its next question re-executes it in its own interpreter. */
  async fork(fromId: string, toId: string): Promise<void> {
    checkThreadId(fromId);
    checkThreadId(toId);
    const from = this.#threads.get(fromId)?.space ?? (await this.#options.store?.load(fromId));
    if (!from) {
      throw new ThreadError({
        reason: "unknown-thread",
        threadId: fromId,
        message: `forkThread: there is no thread ${JSON.stringify(fromId)} (no live thread and no stored history); ask a question on it first`,
      });
    }
    await this.drop(toId);
    const space = new StepSpace();
    space.history.push(...from.history.map((entry) => ({ ...entry, callLog: [...entry.callLog] })));
    space.seed = from.seed;
    space.summary = from.summary;
    this.#threads.set(toId, { space, queue: Promise.resolve(), leased: 0 });
    await this.#options.store?.save(toId, space);
  }

  /** Ends a thread: its interpreter stops and its history is forgotten (in memory and in the store). */
  async drop(threadId: string): Promise<void> {
    checkThreadId(threadId);
    const entry = this.#threads.get(threadId);
    this.#threads.delete(threadId);
    if (entry) {
      clearTimeout(entry.idleTimer);
      await entry.space.interpreter?.close().catch(() => undefined);
      entry.space.interpreter = undefined;
    }
    await this.#options.store?.delete(threadId);
  }

  /** Stops every thread's interpreter (their histories stay in the store). */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#threads.values()];
    this.#threads.clear();
    await Promise.allSettled(
      entries.map((entry) => {
        clearTimeout(entry.idleTimer);
        return entry.space.interpreter?.close();
      }),
    );
  }

  async #entry(threadId: string): Promise<ThreadEntry> {
    checkThreadId(threadId);
    const known = this.#threads.get(threadId);
    if (known) return known;
    const stored = await this.#options.store?.load(threadId);
    const space = stored ?? new StepSpace();
    const lost = this.#lost.get(threadId);
    if (!stored && lost !== undefined) space.lost = lost;
    this.#lost.delete(threadId);
    const entry: ThreadEntry = { space, queue: Promise.resolve(), leased: 0 };
    this.#threads.set(threadId, entry);
    return entry;
  }

  /** Most recently used last; past maxThreads, the least recently used idle threads stop. */
  #touch(threadId: string, entry: ThreadEntry, context: TurnContext): void {
    this.#threads.delete(threadId);
    this.#threads.set(threadId, entry);
    let over = this.#threads.size - this.#options.maxThreads;
    for (const [id, other] of this.#threads) {
      if (over <= 0) break;
      if (id === threadId || other.leased > 0) continue;
      this.#evict(id, other, context, "evicted (maxThreads)");
      over -= 1;
    }
  }

  /** Stops a thread's interpreter; without a store its history goes too (it cannot be restored). */
  #evict(threadId: string, entry: ThreadEntry, context: TurnContext, why: string): void {
    clearTimeout(entry.idleTimer);
    this.#options.logger?.debug({ threadId, why }, "thread interpreter stopped");
    entry.space.release(context);
    this.#threads.delete(threadId);
    if (this.#options.store) return;
    this.#lost.set(
      threadId,
      `the thread's interpreter was stopped (${why}) and this agent has no threadStore to restore it from`,
    );
    for (const oldest of this.#lost.keys()) {
      if (this.#lost.size <= maxLostThreads) break;
      this.#lost.delete(oldest);
    }
  }

  #idleLater(threadId: string, entry: ThreadEntry, context: TurnContext): void {
    if (entry.leased > 0 || this.#closed) return;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.leased === 0 && this.#threads.get(threadId) === entry)
        this.#evict(threadId, entry, context, "idle");
    }, this.#options.idleSeconds * 1000);
    entry.idleTimer.unref();
  }
}

/** The lease of the run's thread: its `configurable.thread_id` checked first. */
export async function leaseThread(
  threads: ThreadRegistry | undefined,
  threadId: string | undefined,
  context: TurnContext,
): Promise<ThreadLease> {
  if (!threads) throw new Error('codeAction.state is "thread" but the turn has no thread registry');
  if (threadId === undefined) {
    throw new ThreadError({
      reason: "no-thread-id",
      message:
        'This agent keeps state per thread (codeAction.state: "thread"), and the invocation named none: pass { configurable: { thread_id: "..." } } as the second argument of invoke() or stream() (one id per conversation), or build the agent with state: "run".',
    });
  }
  return threads.lease(threadId, context);
}

function checkThreadId(threadId: unknown): asserts threadId is string {
  if (typeof threadId === "string" && threadIdPattern.test(threadId)) return;
  throw new ThreadError({
    reason: "invalid-thread-id",
    message: `thread_id must be 1 to 128 characters of letters, digits and . _ : @ - (starting with a letter or digit), got ${JSON.stringify(threadId)?.slice(0, 80)}`,
  });
}
