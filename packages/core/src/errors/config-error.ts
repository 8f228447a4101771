import { CodeActionError } from "./code-action-error.ts";

const code = "config";
const marker = "codeaction.core.config-error";
const symbol = Symbol.for(marker);

/** buildAgent options, a model string or its key are wrong. Thrown before anything starts. */
export class ConfigError extends CodeActionError {
  protected readonly [symbol] = true;
  constructor(options: { message: string; cause?: unknown }) {
    super(options.message, { code, cause: options.cause });
    this.name = "ConfigError";
  }

  static override isInstance(error: unknown): error is ConfigError {
    return CodeActionError.hasMarker(error, marker);
  }
}
