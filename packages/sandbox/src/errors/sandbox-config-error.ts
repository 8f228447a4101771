import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.sandbox-config-error";
const symbol = Symbol.for(marker);

/** The sandbox settings are invalid: an unknown key, a wrong type or a value out of range. Thrown before any container exists. */
export class SandboxConfigError extends SandboxError {
  protected readonly [symbol] = true;
  readonly issues: string[];

  constructor(options: { issues: string[]; cause?: unknown }) {
    super(`Invalid sandbox settings: ${options.issues.join("; ")}`, {
      code: "sandbox-config",
      cause: options.cause,
    });
    this.name = "SandboxConfigError";
    this.issues = options.issues;
  }

  static override isInstance(error: unknown): error is SandboxConfigError {
    return SandboxError.hasMarker(error, marker);
  }
}
