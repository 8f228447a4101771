const marker = "codeaction.sandbox.error";
const symbol = Symbol.for(marker);

/**
 * The base of every error this package throws. `code` is stable (match on it, not on the message);
 * `cause` carries the underlying error when there is one. `isInstance` works across duplicated copies
 * of the package because it checks a `Symbol.for` brand, not the prototype chain.
 */
export class SandboxError extends Error {
  readonly code: string;
  protected readonly [symbol] = true;

  constructor(message: string, options: { code: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SandboxError";
    this.code = options.code;
  }

  static isInstance(error: unknown): error is SandboxError {
    return SandboxError.hasMarker(error, marker);
  }

  protected static hasMarker(error: unknown, markerName: string): boolean {
    const markerSymbol = Symbol.for(markerName);
    return (
      error != null &&
      typeof error === "object" &&
      markerSymbol in error &&
      (error as Record<symbol, unknown>)[markerSymbol] === true
    );
  }
}
