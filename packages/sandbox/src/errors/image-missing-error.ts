import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.image-missing-error";
const symbol = Symbol.for(marker);

/** The sandbox image is not present in the Docker engine (the sandbox never pulls). */
export class ImageMissingError extends SandboxError {
  protected readonly [symbol] = true;
  readonly image: string;

  constructor(options: { image: string; cause?: unknown }) {
    super(
      `The sandbox image "${options.image}" is not present in the Docker engine. Build it with \`codeaction image build\` (or \`pnpm setup\` in this repository), or set \`image\` to an image you have.`,
      { code: "image-missing", cause: options.cause },
    );
    this.name = "ImageMissingError";
    this.image = options.image;
  }

  static override isInstance(error: unknown): error is ImageMissingError {
    return SandboxError.hasMarker(error, marker);
  }
}
