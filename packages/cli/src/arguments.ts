import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { UsageError } from "./errors/usage-error.ts";

/** Options every command takes. */
export const commonOptions = {
  help: { type: "boolean", short: "h" },
  debug: { type: "boolean" },
} as const satisfies ParseArgsOptionsConfig;

/**
 * `util.parseArgs`, strict, with its errors turned into one-line UsageErrors (exit code 2) that
 * name the command.
 */
export function parseCommandArguments<const T extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({
      args,
      options: { ...commonOptions, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = (error as Error).message;
    if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
      const option = /'([^']+)'/.exec(message)?.[1] ?? "an option";
      throw new UsageError({
        command,
        message: `unknown option ${option} for \`codeaction ${command}\``,
        cause: error,
      });
    }
    if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
      throw new UsageError({ command, message: message.replace(/\.$/, ""), cause: error });
    }
    throw new UsageError({ command, message, cause: error });
  }
}

/** A number option ("5", "0.5") within bounds, or a UsageError naming it. */
export function numberOption(
  command: string,
  name: string,
  value: string | undefined,
  bounds: { minimum: number; maximum: number },
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === "" || !Number.isFinite(number) || number < bounds.minimum || number > bounds.maximum) {
    throw new UsageError({
      command,
      message: `--${name} must be a number from ${bounds.minimum} to ${bounds.maximum}, got ${JSON.stringify(value)}`,
    });
  }
  return number;
}

/** One of a fixed set of values, or a UsageError listing them. */
export function choiceOption<const Choice extends string>(
  command: string,
  name: string,
  value: string | undefined,
  choices: readonly Choice[],
): Choice | undefined {
  if (value === undefined) return undefined;
  if (!(choices as readonly string[]).includes(value)) {
    throw new UsageError({
      command,
      message: `--${name} must be ${choices.map((choice) => `"${choice}"`).join(" or ")}, got ${JSON.stringify(value)}`,
    });
  }
  return value as Choice;
}
