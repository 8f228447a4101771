import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.asset-missing-error";
const symbol = Symbol.for(marker);

/**
 * A file one of our packages reads at run time (an asset: the bridge's Python files, an image
 * recipe, the desk's page, a worker thread's entry) is not where the package's layout puts it: a
 * build step was skipped or the installed package is incomplete. The message names the file, where
 * it was looked for, and the fix.
 */
export class AssetMissingError extends SandboxError {
  protected readonly [symbol] = true;
  /** The package that ships the file, such as `@codeaction/core`. */
  readonly packageName: string;
  /** The asset's name in that package's asset table, such as `relay.py`. */
  readonly asset: string;
  /** Where it was looked for. */
  readonly path: string;

  constructor(options: {
    packageName: string;
    asset: string;
    path: string;
    reason: string;
    fix: string;
    cause?: unknown;
  }) {
    super(
      `${options.packageName} cannot find its file "${options.asset}" at ${options.path} (${options.reason}). ${options.fix}`,
      { code: "asset-missing", cause: options.cause },
    );
    this.name = "AssetMissingError";
    this.packageName = options.packageName;
    this.asset = options.asset;
    this.path = options.path;
  }

  static override isInstance(error: unknown): error is AssetMissingError {
    return SandboxError.hasMarker(error, marker);
  }
}
