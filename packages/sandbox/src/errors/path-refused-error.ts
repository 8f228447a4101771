import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.path-refused-error";
const symbol = Symbol.for(marker);

/** A file path outside /workspace and /tmp, or one that is not a plain path (NUL bytes, empty). */
export class PathRefusedError extends SandboxError {
  protected readonly [symbol] = true;
  readonly path: string;

  constructor(options: { path: string; reason: string }) {
    super(
      `The path ${JSON.stringify(options.path)} was refused: ${options.reason}. File operations are confined to /workspace and /tmp (relative paths start at the workdir).`,
      { code: "path-refused" },
    );
    this.name = "PathRefusedError";
    this.path = options.path;
  }

  static override isInstance(error: unknown): error is PathRefusedError {
    return SandboxError.hasMarker(error, marker);
  }
}
