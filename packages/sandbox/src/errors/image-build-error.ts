import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.image-build-error";
const symbol = Symbol.for(marker);

/** Building a sandbox image failed: mmdebstrap, tar, `docker import` or `docker build` said why. */
export class ImageBuildError extends SandboxError {
  protected readonly [symbol] = true;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { code: "image-build", cause: options.cause });
    this.name = "ImageBuildError";
  }

  static override isInstance(error: unknown): error is ImageBuildError {
    return SandboxError.hasMarker(error, marker);
  }
}
