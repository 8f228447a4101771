import { CodeActionError } from "./code-action-error.ts";

const code = "sandbox-unavailable";
const marker = "codeaction.core.sandbox-unavailable-error";
const symbol = Symbol.for(marker);

/**
 * buildAgent needed a working Docker sandbox and could not get one. The agent is not built:
 * model-written code never runs outside a container, and shell mode never runs without its tools.
 * Shell mode's container starts while the first model call runs: when that start fails, the turn
 * that first uses a sandbox tool fails with this error.
 */
export class SandboxUnavailableError extends CodeActionError {
  protected readonly [symbol] = true;
  constructor(options: { what: string; cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super(`${options.what} requires a working Docker sandbox, but it could not be initialized: ${reason}`, {
      code,
      cause: options.cause,
    });
    this.name = "SandboxUnavailableError";
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return CodeActionError.hasMarker(error, marker);
  }
}
