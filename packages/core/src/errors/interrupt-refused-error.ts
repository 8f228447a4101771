import type { PendingCall } from "../durable/run-state.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "interrupt-refused";
const marker = "codeaction.core.interrupt-refused-error";
const symbol = Symbol.for(marker);

/**
 * An approval hook answered "interrupt", but the run could not be resumed from a state, so no state
 * was made: `reason` "samples" (codeAction.samples above 1: several programs must agree, and a state
 * holds one) or "result-not-kept" (a call before the pending one returned more than the call log
 * copies). The pending call was not made, the program was stopped and its containers removed.
 */
export class InterruptRefusedError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  readonly reason: "samples" | "result-not-kept";
  readonly pending: PendingCall;

  constructor(options: {
    runId: string;
    reason: InterruptRefusedError["reason"];
    pending: PendingCall;
    message: string;
  }) {
    super(options.message, { code });
    this.name = "InterruptRefusedError";
    this.runId = options.runId;
    this.reason = options.reason;
    this.pending = options.pending;
  }

  static override isInstance(error: unknown): error is InterruptRefusedError {
    return CodeActionError.hasMarker(error, marker);
  }
}
