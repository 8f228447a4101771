import type { SandboxConfigInput, SandboxManager, SandboxPrelaunch } from "@codeaction/sandbox";
import type { Logger } from "pino";
import { z } from "zod";
import { newSandboxManager } from "./new-sandbox-manager.ts";
import { relayCommand } from "./relay-process.ts";

/** A Python module's dotted name, such as `pandas` or `matplotlib.pyplot`. */
const pythonModuleName = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** `codeAction.preimport`: at most 16 module names, each a dotted Python name. */
export const preimportSchema = z
  .array(
    z
      .string()
      .max(200)
      .regex(pythonModuleName, 'a Python module name, such as "pandas" or "matplotlib.pyplot"'),
  )
  .max(16)
  .default([]);

/** Options of `createCodeActionSandbox` beyond its sandbox settings. */
export type CodeActionSandboxOptions = {
  logger?: Logger;
  /**
   * Programs a turn runs at once (codeAction.samples): the default warm pool holds this many
   * containers, at least one. Ignored when the config sets `pool`.
   */
  samples?: number;
  /**
   * A container already starting in a worker thread with the same settings
   * (`SandboxPrelaunch.start(config)` from `@codeaction/sandbox/prelaunch`, called before this
   * package loads): the first session takes it over after reading every flag back again. The CLI's
   * `ask` starts one while LangChain loads.
   */
  prelaunch?: SandboxPrelaunch;
  /** The modules the warm interpreters import ahead of the program (`codeAction.preimport`: the same list). */
  preimport?: string[];
};

/**
 * Code-action's sandbox settings with the warm pool on unless the caller set `pool`: one container
 * per program a turn runs at once (`samples`), so the next turn's container is already started.
 */
export function withDefaultPool(input: SandboxConfigInput, samples: number): SandboxConfigInput {
  return input.pool === undefined ? { ...input, pool: Math.max(1, samples) } : input;
}

/**
 * A sandbox manager set up for code-action turns, as `buildAgent` makes one: warm by default, each
 * pooled container with the bridge's relay already started, and an image without python3 refused
 * by `ready()`. Pass it as `buildAgent({ sandbox })` to share one pool between several agents, or to
 * start containers before the agent is built; the agents never close it: call `close()`.
 */
export function createCodeActionSandbox(
  config: SandboxConfigInput = {},
  options: CodeActionSandboxOptions = {},
): SandboxManager {
  return newSandboxManager(withDefaultPool(config, options.samples ?? 1), {
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.prelaunch ? { prelaunch: options.prelaunch } : {}),
    warmCommand: relayCommand(preimportSchema.parse(options.preimport ?? [])),
    // The bridge's relay and every program run on python3: an image without it is refused.
    requiredCommands: ["python3"],
  });
}
