import { DATA_IMAGE } from "@codeaction/sandbox/images";
import { numberOption } from "../arguments.ts";
import { UsageError } from "../errors/usage-error.ts";

/** The library's default (`defaultModelTimeoutSeconds` in @codeaction/core), here without loading it. */
export const defaultModelTimeoutSeconds = 90;

/**
 * What the program's interpreter imports while it waits for the program (`codeAction.preimport`):
 * pandas on the data image (the prompt points programs at it for /workspace/data), whose import
 * then leaves the run.
 */
export function preimportFor(image: string | undefined): string[] {
  return image === DATA_IMAGE ? ["pandas"] : [];
}

/** The options `ask` and `chat` share: the data, the servers, the model, the sandbox and the output. */
export const questionOptions = {
  csv: { type: "string", multiple: true },
  file: { type: "string", multiple: true },
  quiet: { type: "boolean" },
  server: { type: "string", multiple: true },
  model: { type: "string" },
  replay: { type: "string" },
  retries: { type: "string" },
  "model-timeout": { type: "string" },
  image: { type: "string" },
  data: { type: "boolean" },
  format: { type: "string" },
  out: { type: "string" },
  steps: { type: "string" },
} as const;

/** The most --steps takes (codeAction.maxSteps' bound). */
export const maximumSteps = 50;

/** --steps: programs one question may take, each seeing the last one's output (default 1). */
export function stepsOption(command: string, value: string | undefined): number {
  const steps = numberOption(command, "steps", value, { minimum: 1, maximum: maximumSteps });
  if (steps !== undefined && !Number.isInteger(steps)) {
    throw new UsageError({
      command,
      message: `--steps must be a whole number, got ${JSON.stringify(value)}`,
    });
  }
  return steps ?? 1;
}

/** How many times `ask` and `chat` try a failed model call again when --retries is not given. */
export const defaultModelRetries = 2;

/** The most --retries takes. */
export const maximumModelRetries = 10;

/** --retries: how often a failed model call is tried again (a whole number, default 2). */
export function retriesOption(command: string, value: string | undefined): number {
  const retries = numberOption(command, "retries", value, { minimum: 0, maximum: maximumModelRetries });
  if (retries !== undefined && !Number.isInteger(retries)) {
    throw new UsageError({
      command,
      message: `--retries must be a whole number, got ${JSON.stringify(value)}`,
    });
  }
  return retries ?? defaultModelRetries;
}

/** --model-timeout: seconds one model call may take (default: the library's 90 s), at most an hour. */
export function modelTimeoutOption(command: string, value: string | undefined): number {
  return (
    numberOption(command, "model-timeout", value, { minimum: 0.1, maximum: 3600 }) ??
    defaultModelTimeoutSeconds
  );
}
