import type { RunState } from "./run-state.ts";

/**
 * Where interrupted runs wait for their decision: a state per run id. Small on purpose, so a
 * database, a key-value store or a LangGraph checkpointer can stand behind it. `take` hands a state
 * out once: of two processes resuming the same run, one gets it (no call is approved twice).
 * The states are signed; a store keeps them as they are and never needs the key.
 */
export interface RunStore {
  /** Keeps `state` under its run id (replacing the run's earlier state). */
  save(state: RunState): Promise<void>;
  /** The state of run `runId`, or undefined; it stays in the store. */
  load(runId: string): Promise<RunState | undefined>;
  /** The state of run `runId`, removed from the store in the same step; undefined when absent or already taken. */
  take(runId: string): Promise<RunState | undefined>;
  /** The run ids whose states wait, oldest first. */
  list(): Promise<string[]>;
}
