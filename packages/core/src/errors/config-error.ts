import { CodeActionError, hasCode } from "./code-action-error.ts";

const code = "config";

/** buildAgent options, a model string or its key are wrong. Thrown before anything starts. */
export class ConfigError extends CodeActionError {
  constructor(options: { message: string; cause?: unknown }) {
    super({ code, ...options });
    this.name = "ConfigError";
  }

  static override isInstance(error: unknown): error is ConfigError {
    return hasCode(error, code);
  }
}
