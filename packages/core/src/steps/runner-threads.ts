import type { SandboxSession } from "@codeaction/sandbox";
import { ThreadError } from "../errors/thread-error.ts";
import type { ProgramRun } from "../program/run-program.ts";
import { LiveInterpreter } from "./live-interpreter.ts";

/** A program runner's thread settings (createProgramRunner's `threads`). */
export type RunnerThreadOptions = {
  /** Live threads at most; the least recently used idle one is stopped first (default 8). */
  maxThreads?: number;
  /** Seconds an unused thread's interpreter lives (default 600). */
  idleSeconds?: number;
};

type Entry = { interpreter: LiveInterpreter; queue: Promise<void>; busy: number; idle?: NodeJS.Timeout };

const threadKeyPattern = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,255}$/;

/**
 * A program runner's threads: one live interpreter (its own container) per key, kept between
 * runs, bounded like an agent's (LRU past `maxThreads`, stopped after `idleSeconds`). No history
 * is kept: a thread whose interpreter was stopped starts afresh, and the run says so (`fresh`).
 */
export class RunnerThreads {
  readonly #threads = new Map<string, Entry>();
  readonly #start: () => Promise<SandboxSession>;
  readonly #maxThreads: number;
  readonly #idleMs: number;
  #closed = false;

  constructor(start: () => Promise<SandboxSession>, options: RunnerThreadOptions = {}) {
    this.#start = start;
    this.#maxThreads = options.maxThreads ?? 8;
    this.#idleMs = (options.idleSeconds ?? 600) * 1000;
  }

  /** Runs `work` in thread `key`'s interpreter (one run at a time per thread); `fresh` when it had none alive. */
  async run(
    key: string,
    work: (interpreter: LiveInterpreter) => Promise<ProgramRun>,
  ): Promise<{ run: ProgramRun; fresh: boolean }> {
    if (this.#closed) throw new ThreadError({ reason: "closed", message: "this program runner was closed" });
    if (!threadKeyPattern.test(key)) {
      throw new ThreadError({
        reason: "invalid-thread-id",
        message: `a thread name is 1 to 256 letters, digits and . _ : @ - (starting with a letter or digit), got ${JSON.stringify(key).slice(0, 80)}`,
      });
    }
    let entry = this.#threads.get(key);
    const before = entry?.queue ?? Promise.resolve();
    let done!: () => void;
    const turn = new Promise<void>((resolve) => {
      done = resolve;
    });
    if (entry) {
      entry.queue = turn;
      entry.busy += 1;
      clearTimeout(entry.idle);
    }
    await before;
    try {
      let fresh = false;
      if (!entry?.interpreter.alive) {
        if (entry) void entry.interpreter.close().catch(() => undefined);
        const interpreter = new LiveInterpreter(await this.#start(), {});
        entry = { interpreter, queue: turn, busy: 1 };
        fresh = true;
      }
      this.#threads.delete(key);
      this.#threads.set(key, entry);
      this.#evictOver(key);
      return { run: await work(entry.interpreter), fresh };
    } finally {
      if (entry) {
        entry.busy -= 1;
        this.#idleLater(key, entry);
      }
      done();
    }
  }

  /** Stops every thread's interpreter. */
  async close(): Promise<void> {
    this.#closed = true;
    const entries = [...this.#threads.values()];
    this.#threads.clear();
    await Promise.allSettled(
      entries.map((entry) => {
        clearTimeout(entry.idle);
        return entry.interpreter.close();
      }),
    );
  }

  #evictOver(current: string): void {
    let over = this.#threads.size - this.#maxThreads;
    for (const [key, entry] of this.#threads) {
      if (over <= 0) return;
      if (key === current || entry.busy > 0) continue;
      this.#stop(key, entry);
      over -= 1;
    }
  }

  #stop(key: string, entry: Entry): void {
    clearTimeout(entry.idle);
    this.#threads.delete(key);
    void entry.interpreter.close().catch(() => undefined);
  }

  #idleLater(key: string, entry: Entry): void {
    if (entry.busy > 0 || this.#closed || this.#threads.get(key) !== entry) return;
    entry.idle = setTimeout(() => {
      if (entry.busy === 0 && this.#threads.get(key) === entry) this.#stop(key, entry);
    }, this.#idleMs);
    entry.idle.unref();
  }
}
