import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.security-flag-error";
const symbol = Symbol.for(marker);

/** A security setting did not take: the container (or image) does not look the way it was asked to. Fail closed. */
export class SecurityFlagError extends SandboxError {
  protected readonly [symbol] = true;
  readonly problems: string[];

  constructor(options: { problems: string[]; containerId?: string }) {
    super(
      `The sandbox refused to run code: ${options.problems.length === 1 ? "a security setting" : `${options.problems.length} security settings`} did not take${options.containerId ? ` on container ${options.containerId.slice(0, 12)}` : ""}: ${options.problems.join("; ")}. The container was removed. Check the Docker engine version and its daemon.json (an engine that ignores a flag cannot run the sandbox).`,
      { code: "security-flag" },
    );
    this.name = "SecurityFlagError";
    this.problems = options.problems;
  }

  static override isInstance(error: unknown): error is SecurityFlagError {
    return SandboxError.hasMarker(error, marker);
  }
}
