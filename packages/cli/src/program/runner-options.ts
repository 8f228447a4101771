import type { ProgramRunnerOptions } from "@codeaction/core";
import { numberOption } from "../arguments.ts";
import { sandboxImage } from "../commands/sandbox-run.ts";
import { UsageError } from "../errors/usage-error.ts";

/** The options of commands that run programs against tools (`run`, `mcp`), for parseCommandArguments. */
export const runnerOptionDefinitions = {
  csv: { type: "string", multiple: true },
  file: { type: "string", multiple: true },
  server: { type: "string", multiple: true },
  timeout: { type: "string" },
  "max-tool-calls": { type: "string" },
  image: { type: "string" },
  data: { type: "boolean" },
} as const;

/** `--csv`, `--file` and `--server` as loadTools takes them, read from the command's folder (`cwd`). */
export function runnerTools(
  command: string,
  values: { csv?: string[]; file?: string[]; server?: string[] },
  cwd: string,
): { csv: string[]; file: string[]; servers: string[]; command: string; cwd: string } {
  return { csv: values.csv ?? [], file: values.file ?? [], servers: values.server ?? [], command, cwd };
}

/**
 * `--timeout`, `--max-tool-calls`, `--image` and `--data` as program-runner settings (the turn's
 * defaults for what is not given), or a UsageError naming the option.
 */
export function runnerSettings(
  command: string,
  values: { timeout?: string; "max-tool-calls"?: string; image?: string; data?: boolean },
): Omit<ProgramRunnerOptions, "tools" | "approval" | "logger"> {
  const execTimeout = numberOption(command, "timeout", values.timeout, { minimum: 1, maximum: 86_400 });
  const maxToolCalls = numberOption(command, "max-tool-calls", values["max-tool-calls"], {
    minimum: 0,
    maximum: 100_000,
  });
  if (maxToolCalls !== undefined && !Number.isInteger(maxToolCalls))
    throw new UsageError({ command, message: "--max-tool-calls must be a whole number" });
  if (values.image !== undefined && values.data)
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  return {
    sandbox: { network: "none", ...sandboxImage(values) },
    ...(execTimeout === undefined ? {} : { execTimeout }),
    ...(maxToolCalls === undefined ? {} : { maxToolCalls }),
  };
}
