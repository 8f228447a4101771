import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.network-setup-error";
const symbol = Symbol.for(marker);

/**
 * The restricted network could not be set up (the proxy image, the proxy container, or a session's
 * internal network). The session does not start: without its proxy a sandbox would have no network
 * at all, and the owner asked for some.
 */
export class NetworkSetupError extends SandboxError {
  protected readonly [symbol] = true;
  /** What was being done: "runtime", "proxy-image", "proxy-start", "session-network". */
  readonly step: string;

  constructor(options: { step: string; reason: string; fix: string; cause?: unknown }) {
    super(`The restricted network could not be set up (${options.step}): ${options.reason}. ${options.fix}`, {
      code: "network-setup",
      cause: options.cause,
    });
    this.name = "NetworkSetupError";
    this.step = options.step;
  }

  static override isInstance(error: unknown): error is NetworkSetupError {
    return SandboxError.hasMarker(error, marker);
  }
}
