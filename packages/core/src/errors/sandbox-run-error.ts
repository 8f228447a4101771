import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "sandbox-run";
const marker = "codeaction.core.sandbox-run-error";
const symbol = Symbol.for(marker);

/**
 * The sandbox itself failed during a turn (a container did not start, the bridge channel broke).
 * Not the program's fault, so no repair is tried; the attempts so far are kept.
 */
export class SandboxRunError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly attempts: Attempt[];
  readonly runId: string;

  constructor(options: { runId: string; attempts: Attempt[]; cause: unknown; detail: string }) {
    super(
      `The sandbox failed while running the program: ${options.detail}. Check that Docker is running (docker info) and the sandbox image exists.`,
      { code, cause: options.cause },
    );
    this.name = "SandboxRunError";
    this.attempts = options.attempts;
    this.runId = options.runId;
  }

  static override isInstance(error: unknown): error is SandboxRunError {
    return CodeActionError.hasMarker(error, marker);
  }
}
