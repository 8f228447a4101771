import { CliError } from "./cli-error.ts";

const marker = "codeaction.cli.usage-error";
const symbol = Symbol.for(marker);

/** The command line itself is wrong: an unknown flag, a missing argument, a bad value. Exit code 2. */
export class UsageError extends CliError {
  protected readonly [symbol] = true;

  constructor(options: { message: string; command?: string; cause?: unknown }) {
    const help = options.command ? `codeaction ${options.command} --help` : "codeaction --help";
    super(`${options.message} (see \`${help}\`)`, { code: "usage", exitCode: 2, cause: options.cause });
    this.name = "UsageError";
  }

  static override isInstance(error: unknown): error is UsageError {
    return CliError.hasMarker(error, marker);
  }
}
