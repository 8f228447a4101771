/**
 * The one base of the codeaction packages' own errors: SandboxError (@codeaction/sandbox),
 * CodeActionError (@codeaction/core) and CliError (@codeaction/cli) extend it. A stable `code`
 * (match on it, not on the message), an ES2022 `cause`, and `isInstance` on every class, which
 * checks a `Symbol.for` brand (one per class, set as a field) instead of the prototype chain, so it
 * works across duplicated copies of a package. `hasMarker` is that check, here once.
 */
export abstract class BrandedError<Code extends string = string> extends Error {
  readonly code: Code;

  constructor(message: string, options: { code: Code; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = options.code;
  }

  /** Whether `error` carries the brand `Symbol.for(markerName)`: the check behind every `isInstance`. */
  protected static hasMarker(error: unknown, markerName: string): boolean {
    const brand = Symbol.for(markerName);
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[brand] === true;
  }
}
