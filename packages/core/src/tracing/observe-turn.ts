import type { AgentEvent, AgentResult } from "../types.ts";
import type { RunObserver } from "./run-observer.ts";

/**
 * A turn's steps as the observer sees them: the agent span ends with the outcome, and a turn that
 * was stopped by its budget rejects with that BudgetExceededError (not the AbortError the stop
 * caused) once its program is killed and its containers are removed.
 */
export async function* observeTurn(
  observer: RunObserver,
  steps: AsyncGenerator<AgentEvent, AgentResult>,
): AsyncGenerator<AgentEvent, AgentResult> {
  let ended = false;
  try {
    const result = yield* steps;
    ended = true;
    observer.finish();
    return result;
  } catch (error) {
    ended = true;
    const outcome = observer.stopReason ?? error;
    observer.finish(outcome);
    throw outcome;
  } finally {
    if (!ended) observer.finish(new Error("the stream was left before the answer"));
  }
}

/** The turn's signal: the caller's, and the observer's stop. */
export function runSignal(observer: RunObserver, caller: AbortSignal | undefined): AbortSignal {
  return caller ? AbortSignal.any([caller, observer.signal]) : observer.signal;
}
