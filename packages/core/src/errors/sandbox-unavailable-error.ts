import { CodeActionError, hasCode } from "./code-action-error.ts";

const code = "sandbox-unavailable";

/**
 * buildAgent needed a working Docker sandbox and could not get one. The agent is not built:
 * model-written code never runs outside a container, and shell mode never runs without its tools.
 * Shell mode's container starts while the first model call runs: when that start fails, the turn
 * that first uses a sandbox tool fails with this error.
 */
export class SandboxUnavailableError extends CodeActionError {
  constructor(options: { what: string; cause: unknown }) {
    const reason = options.cause instanceof Error ? options.cause.message : String(options.cause);
    super({
      code,
      message: `${options.what} requires a working Docker sandbox, but it could not be initialized: ${reason}`,
      cause: options.cause,
    });
    this.name = "SandboxUnavailableError";
  }

  static override isInstance(error: unknown): error is SandboxUnavailableError {
    return hasCode(error, code);
  }
}
