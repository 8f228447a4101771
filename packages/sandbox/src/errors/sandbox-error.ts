import { BrandedError } from "./branded-error.ts";

/**
 * Every `code` a sandbox error carries. Match on these, not on messages. A new code is added here
 * first, so that a caller's `switch` over the union is checked by the compiler.
 */
export type SandboxErrorCode =
  /** A file the package reads at run time is missing (a skipped build step, an incomplete install). */
  | "asset-missing"
  | "container-start"
  | "docker-unavailable"
  /** The engine cannot hold the sandbox's settings (Podman over the network, rootless without cgroup limits). */
  | "engine-unsupported"
  | "file-list-failed"
  | "file-not-found"
  /** A host file could not be placed in the container (`session.placeFiles`). */
  | "file-placement"
  | "file-read-failed"
  | "file-timeout"
  | "file-write-failed"
  | "image-build"
  | "image-missing"
  /** The image lacks something the caller needs (`requiredCommands`, such as python3). */
  | "image-unsuitable"
  | "invalid-option"
  | "kill-helper"
  | "manager-closed"
  | "network-setup"
  | "not-ready"
  | "package-refused"
  | "path-refused"
  | "runtime-not-gvisor"
  | "runtime-not-registered"
  | "sandbox-config"
  | "security-flag"
  | "session-destroyed"
  | "session-expired";

const marker = "codeaction.sandbox.error";
const symbol = Symbol.for(marker);

/**
 * The base of every error this package throws for its own reasons (dockerode's and Node's errors
 * reach the caller as the `cause` of one of these, except where a method documents otherwise). `code` is stable (match on it, not on the message);
 * `cause` carries the underlying error when there is one. `isInstance` works across duplicated copies
 * of the package because it checks a `Symbol.for` brand, not the prototype chain (BrandedError).
 */
export class SandboxError extends BrandedError<SandboxErrorCode> {
  protected readonly [symbol] = true;

  constructor(message: string, options: { code: SandboxErrorCode; cause?: unknown }) {
    super(message, options);
    this.name = "SandboxError";
  }

  static isInstance(error: unknown): error is SandboxError {
    return SandboxError.hasMarker(error, marker);
  }
}
