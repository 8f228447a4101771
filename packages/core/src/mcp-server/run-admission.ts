/** Runs (running or waiting for a container) one connection may have at once. */
export const runsPerConnection = 4;
/** Runs (running or waiting for a container) across all connections. */
export const maxServerRuns = 20;

/** A place in the run queue, given back when the run's reply is made. */
export type AdmissionTicket = { release(): void };
/** Admits a run for one connection, or says why not (the server is full, or this connection is). */
export type ConnectionAdmission = () => AdmissionTicket | { refusal: string };

/**
 * Caps the runs the server keeps (each holds its program, up to 1 MB, and later its reply): at most
 * `maxRuns` across all connections and `perConnection` for any one. A run past a cap is refused at
 * once (an error result), never queued.
 */
export function createRunAdmission(options: { maxRuns?: number; perConnection?: number } = {}) {
  const maxRuns = options.maxRuns ?? maxServerRuns;
  const perConnection = options.perConnection ?? runsPerConnection;
  const byConnection = new WeakMap<object, number>();
  let total = 0;
  return {
    forConnection(connection: object): ConnectionAdmission {
      return () => {
        const own = byConnection.get(connection) ?? 0;
        if (own >= perConnection) {
          return {
            refusal: `This connection already has ${own} programs running or waiting, the most one connection may have (${perConnection}); call run_program again when one has ended.`,
          };
        }
        if (total >= maxRuns) {
          return {
            refusal: `The server is busy: ${total} programs are running or waiting, its limit (${maxRuns}); call run_program again when one has ended.`,
          };
        }
        total += 1;
        byConnection.set(connection, own + 1);
        let released = false;
        return {
          release: () => {
            if (released) return;
            released = true;
            total -= 1;
            byConnection.set(connection, (byConnection.get(connection) ?? 1) - 1);
          },
        };
      };
    },
  };
}
