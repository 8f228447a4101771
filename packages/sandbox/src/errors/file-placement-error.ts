import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.file-placement-error";
const symbol = Symbol.for(marker);

/** A host file that could not be placed in the container (`session.placeFiles`): a full /workspace, or the command failed. */
export class FilePlacementError extends SandboxError {
  protected readonly [symbol] = true;
  readonly hostPath: string;
  readonly containerPath: string;
  /** The file's size on the host. */
  readonly bytes: number;
  /** True when the container's /workspace had no room left (raise `diskLimit`). */
  readonly noSpace: boolean;
  /** What the placing command said (its stderr, bounded), or its exit code. */
  readonly reason: string;

  constructor(options: { hostPath: string; containerPath: string; bytes: number; reason: string }) {
    const noSpace = /no space left/i.test(options.reason);
    super(
      noSpace
        ? `The file ${options.hostPath} (${options.bytes} bytes) did not fit in the sandbox's /workspace at ${options.containerPath} (${options.reason}); raise the sandbox's diskLimit.`
        : `The file ${options.hostPath} could not be placed at ${options.containerPath}: ${options.reason}.`,
      { code: "file-placement" },
    );
    this.name = "FilePlacementError";
    this.hostPath = options.hostPath;
    this.containerPath = options.containerPath;
    this.bytes = options.bytes;
    this.noSpace = noSpace;
    this.reason = options.reason;
  }

  static override isInstance(error: unknown): error is FilePlacementError {
    return SandboxError.hasMarker(error, marker);
  }
}
