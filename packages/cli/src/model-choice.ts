import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { redactUrls } from "@codeaction/core";
import { CliError } from "./errors/cli-error.ts";
import { ModelMissingError } from "./errors/model-missing-error.ts";
import { UsageError } from "./errors/usage-error.ts";
import type { ModelCallSettings } from "./model-failure.ts";
import { firstRunReplayPath } from "./shipped-replay.ts";

/** The live model `ask` uses when OPENAI_API_KEY is set and no --model is given. */
export const defaultModel = "openai:gpt-5-mini";

export type ModelChoice =
  | { kind: "live"; model: string; baseUrl?: string }
  | { kind: "replay"; file: string };

/**
 * --replay FILE plays recorded replies (even when a key is set: asking for a replay is explicit);
 * else --model naming another provider ("anthropic:claude-sonnet-4-5") gives that live model;
 * else OPENAI_API_KEY gives the OpenAI one (--model, default openai:gpt-5-mini); else a
 * ModelMissingError saying what to set.
 */
export async function chooseModel(options: {
  model?: string;
  replay?: string;
  env: NodeJS.ProcessEnv;
  /** The command's folder: a relative --replay is its, and the shipped recording is named relative to it. */
  cwd: string;
  /** `codeaction resume` of this run: its hints speak of resume, not of a first ask. */
  resuming?: string;
}): Promise<ModelChoice> {
  if (options.replay !== undefined) {
    const file = resolve(options.cwd, options.replay);
    if (options.model !== undefined) {
      throw new UsageError({
        command: "ask",
        message: "--model and --replay cannot be combined: a replay plays recorded replies, not a model",
      });
    }
    try {
      await access(file);
    } catch (error) {
      if (options.resuming !== undefined)
        throw resumeModelError(options.resuming, `the replay file ${options.replay} does not exist`, error);
      throw new CliError(
        `The replay file ${options.replay} does not exist. Pass the path of a recording ({"replies": [...]}), such as the one codeaction ships: ${firstRunReplayPath(options.cwd)}.`,
        { code: "replay-missing", cause: error },
      );
    }
    return { kind: "replay", file };
  }
  const model = options.model ?? defaultModel;
  const qualified = model.includes(":") ? model : `openai:${model}`;
  if (!qualified.startsWith("openai:")) {
    // Another provider named on purpose: its package and its key are checked when the model loads,
    // with an error naming what to install or set.
    return { kind: "live", model: qualified };
  }
  if (options.env.OPENAI_API_KEY?.trim()) {
    const baseUrl = options.env.OPENAI_BASE_URL?.trim();
    return { kind: "live", model: qualified, ...(baseUrl ? { baseUrl } : {}) };
  }
  if (options.resuming !== undefined)
    throw resumeModelError(options.resuming, "no model is given (no --replay, no OPENAI_API_KEY)");
  throw new ModelMissingError({ cwd: options.cwd });
}

/** A resume without the model its run was asked with: the hint is the ask's own options, not a first run. */
function resumeModelError(runId: string, problem: string, cause?: unknown): CliError {
  return new CliError(
    `codeaction resume ${runId}: ${problem}. The resumed program runs without a model call, but a failed program is repaired by the model, so resume takes the model options run ${runId} was asked with: pass the same --replay FILE, or --model with its key (OPENAI_API_KEY for OpenAI), as that codeaction ask (or chat) had.`,
    { code: "model-missing", ...(cause === undefined ? {} : { cause }) },
  );
}

/** One line for stderr: which model answers. */
export function describeModelChoice(choice: ModelChoice): string {
  if (choice.kind === "replay") {
    return `model: a REPLAY of recorded replies from ${choice.file} (not a live model; set OPENAI_API_KEY and drop --replay for a live one)`;
  }
  // OPENAI_BASE_URL can hold credentials or a key in its query string: not on the screen either.
  return `model: ${choice.model}${choice.baseUrl ? ` at ${redactUrls(choice.baseUrl)}` : ""} (live)`;
}

/** Where a choice's calls go, for error messages: the base URL (redacted), the provider's API, or the replay file. */
export function modelPlace(choice: ModelChoice): string {
  if (choice.kind === "replay") return `the replay file ${choice.file}`;
  if (choice.baseUrl) return redactUrls(choice.baseUrl);
  const provider = choice.model.slice(0, choice.model.indexOf(":"));
  return provider === "openai" ? "https://api.openai.com/v1" : `the ${provider} API`;
}

/** What a failed model call of `choice` is explained with: its tries, its timeout, where it went, its name. */
export function modelCallSettings(
  choice: ModelChoice,
  options: { retries: number; timeoutSeconds: number; model?: string | undefined },
): ModelCallSettings {
  const { retries, timeoutSeconds, model } = options;
  return { retries, timeoutSeconds, place: modelPlace(choice), ...(model ? { model } : {}) };
}
