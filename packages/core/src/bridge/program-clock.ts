/**
 * The program's time budget: runs while the program runs, stands still while any approval is
 * pending, and calls `onExpire` once when the budget is used up.
 */
export class ProgramClock {
  readonly #limitMs: number;
  readonly #onExpire: () => void;
  #usedMs = 0;
  #runningSince: number | undefined;
  #pauses = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: { limitMs: number; onExpire: () => void }) {
    this.#limitMs = options.limitMs;
    this.#onExpire = options.onExpire;
  }

  /** Program time used so far, in milliseconds. */
  get usedMs(): number {
    return this.#usedMs + (this.#runningSince === undefined ? 0 : performance.now() - this.#runningSince);
  }

  start(): void {
    if (this.#stopped || this.#runningSince !== undefined || this.#pauses > 0) return;
    this.#runningSince = performance.now();
    const remaining = Math.max(0, this.#limitMs - this.#usedMs);
    this.#timer = setTimeout(() => this.#expire(), remaining);
  }

  /** Stops the clock until the matching `resume` (pauses nest). */
  pause(): void {
    this.#pauses += 1;
    if (this.#runningSince === undefined) return;
    this.#usedMs += performance.now() - this.#runningSince;
    this.#runningSince = undefined;
    clearTimeout(this.#timer);
  }

  resume(): void {
    this.#pauses = Math.max(0, this.#pauses - 1);
    if (this.#pauses === 0) this.start();
  }

  stop(): void {
    if (this.#runningSince !== undefined) this.#usedMs += performance.now() - this.#runningSince;
    this.#runningSince = undefined;
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #expire(): void {
    if (this.#stopped) return;
    this.stop();
    this.#onExpire();
  }
}
