import { CodeActionError } from "./code-action-error.ts";

const code = "resume-state";
const marker = "codeaction.core.resume-state-error";
const symbol = Symbol.for(marker);

/**
 * A run state (or run record) was refused before anything started: it is not one this version
 * wrote, its signature is missing or wrong, it was consumed already, its decision was made about
 * another call, or it does not fit the agent resuming it. `reason` says
 * which; the message says what to do.
 */
export class ResumeStateError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly reason:
    | "malformed"
    | "unsigned"
    | "bad-signature"
    | "no-secret"
    | "mismatch"
    | "unavailable"
    | "consumed"
    | "decision-mismatch";

  constructor(options: { reason: ResumeStateError["reason"]; message: string; cause?: unknown }) {
    super(options.message, { code, cause: options.cause });
    this.name = "ResumeStateError";
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is ResumeStateError {
    return CodeActionError.hasMarker(error, marker);
  }
}
