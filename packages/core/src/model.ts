import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatOpenAI } from "@langchain/openai";
import { ConfigError } from "./errors/config-error.ts";

const providers = ["openai"] as const;

/**
 * Resolves a model option: a BaseChatModel is used as it is; a string "<provider>:<model>"
 * ("openai:gpt-5-mini") becomes that provider's chat model. Checks the provider's key here, at
 * build time, so a missing key fails before any container starts. Honours OPENAI_BASE_URL, so
 * OpenAI-compatible local servers work.
 */
export function resolveModel(
  model: string | BaseChatModel,
  environment: NodeJS.ProcessEnv = process.env,
): BaseChatModel {
  if (typeof model !== "string") return model;
  const separator = model.indexOf(":");
  const provider = separator === -1 ? "" : model.slice(0, separator);
  const name = separator === -1 ? "" : model.slice(separator + 1).trim();
  if (!provider || !name) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} is not "<provider>:<model>". Write it like "openai:gpt-5-mini", or pass a @langchain/core BaseChatModel.`,
    });
  }
  if (provider !== "openai") {
    throw new ConfigError({
      message: `model provider ${JSON.stringify(provider)} is not supported by name (supported: ${providers.join(", ")}). Pass a @langchain/core BaseChatModel instance for other providers.`,
    });
  }
  const apiKey = environment.OPENAI_API_KEY?.trim();
  if (!apiKey) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} needs OPENAI_API_KEY, which is not set. Export it (export OPENAI_API_KEY=sk-...); for a local OpenAI-compatible server set OPENAI_BASE_URL and any non-empty key.`,
    });
  }
  const baseURL = environment.OPENAI_BASE_URL?.trim();
  return new ChatOpenAI({
    model: name,
    apiKey,
    ...(baseURL ? { configuration: { baseURL } } : {}),
  });
}

/** The model's name for messages and logs. */
export function modelName(model: BaseChatModel): string {
  const named = model as unknown as { model?: unknown; modelName?: unknown };
  if (typeof named.model === "string") return named.model;
  if (typeof named.modelName === "string") return named.modelName;
  return model._llmType();
}
