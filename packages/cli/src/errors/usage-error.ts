import { CliError } from "./cli-error.ts";

/** The command line itself is wrong: an unknown flag, a missing argument, a bad value. Exit code 2. */
export class UsageError extends CliError {
  constructor(options: { message: string; command?: string; cause?: unknown }) {
    const help = options.command ? `codeaction ${options.command} --help` : "codeaction --help";
    super({
      code: "usage",
      exitCode: 2,
      message: `${options.message} (see \`${help}\`)`,
      cause: options.cause,
    });
    this.name = "UsageError";
  }

  static override isInstance(error: unknown): error is UsageError {
    return CliError.isInstance(error) && error.code === "usage";
  }
}
