import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.package-refused-error";
const symbol = Symbol.for(marker);

/** installPackage was given something that is not a package specification (`x; rm -rf /`). */
export class PackageRefusedError extends SandboxError {
  protected readonly [symbol] = true;
  readonly packageName: string;

  constructor(options: { packageName: string; reason: string }) {
    super(
      `The package ${JSON.stringify(options.packageName)} was refused: ${options.reason}. Give one package specification, such as "requests" or "numpy==2.1.0".`,
      { code: "package-refused" },
    );
    this.name = "PackageRefusedError";
    this.packageName = options.packageName;
  }

  static override isInstance(error: unknown): error is PackageRefusedError {
    return SandboxError.hasMarker(error, marker);
  }
}
