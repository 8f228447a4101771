/** Bytes of request bodies the server reads and parses at once, across all connections. */
export const defaultBodyBudgetBytes = 16 * 1024 * 1024;

/** Bytes held from a body budget until `release()` (called once the body is parsed or refused). */
export type BodyReservation = { release(): void };

/**
 * A byte budget for request bodies being read and parsed: a body takes its declared length (or
 * the whole body cap when it is chunked) before its first byte is read, and waits in line while the
 * budget is spent. A waiting body is not read, so its bytes stay in the client's socket, not in
 * this process: many connections sending 8 MiB bodies at once cannot make the server hold them all
 * (each costs about four times its size while it is parsed). A body larger than the whole budget
 * waits until nothing else is held, then takes all of it.
 */
export function createBodyBudget(totalBytes = defaultBodyBudgetBytes) {
  let held = 0;
  const waiting: Array<{ bytes: number; grant: () => void }> = [];
  const grantWaiting = () => {
    while (waiting.length > 0) {
      const next = waiting[0]!;
      if (held > 0 && held + next.bytes > totalBytes) return;
      waiting.shift();
      held += next.bytes;
      next.grant();
    }
  };
  return {
    /** Resolves once `bytes` (at most the whole budget) are held for the caller, in arrival order. */
    reserve(bytes: number): Promise<BodyReservation> {
      const taken = Math.min(bytes, totalBytes);
      let released = false;
      const reservation = {
        release: () => {
          if (released) return;
          released = true;
          held -= taken;
          grantWaiting();
        },
      };
      return new Promise((resolve) => {
        waiting.push({ bytes: taken, grant: () => resolve(reservation) });
        grantWaiting();
      });
    },
    /** Bytes held now and bodies waiting (for tests and logs). */
    status: () => ({ held, waiting: waiting.length }),
  };
}

export type BodyBudget = ReturnType<typeof createBodyBudget>;
