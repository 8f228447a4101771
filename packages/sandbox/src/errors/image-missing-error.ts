import { DATA_IMAGE, DEFAULT_IMAGE } from "../images/names.ts";
import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.image-missing-error";
const symbol = Symbol.for(marker);

/** The sandbox image is not present in the Docker engine (the sandbox never pulls). */
export class ImageMissingError extends SandboxError {
  protected readonly [symbol] = true;
  readonly image: string;

  constructor(options: { image: string; cause?: unknown }) {
    super(
      `The sandbox image "${options.image}" is not present in the Docker engine. ${howToBuild(options.image)}`,
      { code: "image-missing", cause: options.cause },
    );
    this.name = "ImageMissingError";
    this.image = options.image;
  }

  static override isInstance(error: unknown): error is ImageMissingError {
    return SandboxError.hasMarker(error, marker);
  }
}

/** The command that builds `image`: ours by their flavour, any other name by --tag (the sandbox never pulls). */
function howToBuild(image: string): string {
  if (image === DEFAULT_IMAGE)
    return "Build it with `codeaction image build` (or buildImage() from @codeaction/sandbox).";
  if (image === DATA_IMAGE) {
    return 'Build it with `codeaction image build --data` (or buildImage({ flavour: "data" }) from @codeaction/sandbox).';
  }
  return `Build our recipe under that name with \`codeaction image build --tag ${image}\` (add --base-image IMAGE for another Python base), or \`docker pull ${image}\` if a registry has it, or set \`image\` to an image you have.`;
}
