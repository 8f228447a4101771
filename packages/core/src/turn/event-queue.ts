/**
 * Turns callbacks that fire while some work runs into an async generator: `drain(work)` yields
 * every pushed item as it arrives and returns (or throws) what the work does.
 */
export function createEventQueue<T>() {
  const buffer: T[] = [];
  let wake: (() => void) | undefined;

  return {
    push(item: T): void {
      buffer.push(item);
      wake?.();
    },

    async *drain<R>(work: Promise<R>): AsyncGenerator<T, R> {
      const state: { outcome?: { ok: true; value: R } | { ok: false; error: unknown } } = {};
      work.then(
        (value) => {
          state.outcome = { ok: true, value };
          wake?.();
        },
        (error: unknown) => {
          state.outcome = { ok: false, error };
          wake?.();
        },
      );
      while (true) {
        while (buffer.length > 0) yield buffer.shift() as T;
        if (state.outcome) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      const outcome = state.outcome;
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    },
  };
}
