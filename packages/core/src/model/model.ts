import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import { Runnable, RunnableBinding, RunnableRetry, RunnableWithFallbacks } from "@langchain/core/runnables";
import { ConfigError } from "../errors/config-error.ts";
import { modelProviders } from "./model-providers.ts";

/** A chat model, or a Runnable wrapping one (`withRetry`, `withFallbacks`, `withConfig`, `bind`). */
export type ChatModelRunnable = Runnable<BaseLanguageModelInput, BaseMessage>;

/** What the model option takes: "<provider>:<model>", a chat model, or a Runnable wrapping one. */
/** The model: "<provider>:<model>" ("openai:gpt-5-mini"), a LangChain chat model, or a Runnable wrapping one. */
export type ModelOption = string | BaseChatModel | ChatModelRunnable;

/** True for a chat model itself (any copy of @langchain/core). */
export function isChatModel(value: unknown): value is BaseChatModel {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { invoke?: unknown }).invoke === "function" &&
    typeof (value as { _llmType?: unknown })._llmType === "function"
  );
}

/** True for a chat model or any Runnable (a wrapper is checked for its model where it matters). */
export function isModelRunnable(value: unknown): value is ChatModelRunnable {
  return isChatModel(value) || Runnable.isRunnable(value);
}

/**
 * The chat model under `withRetry`, `withFallbacks` (the primary), `withConfig` and `bind`
 * wrappers; undefined when the Runnable wraps none.
 */
export function underlyingChatModel(model: unknown): BaseChatModel | undefined {
  if (isChatModel(model)) return model;
  if (model instanceof RunnableWithFallbacks) return underlyingChatModel(model.runnable);
  if (model instanceof RunnableBinding) return underlyingChatModel(model.bound);
  return undefined;
}

/**
 * `model` with `tools` bound to its chat model, keeping the wrappers around it: a retry still
 * retries, every fallback gets the tools too. Undefined when a model in it cannot call tools.
 * With `answerSchema`, each chat model whose provider has native structured output for a JSON
 * Schema (OpenAI's `response_format`) is also asked for its final reply in that shape; the others
 * are left as they are (the runner checks every reply's text either way).
 */
export function bindToolsThrough(
  model: ChatModelRunnable,
  tools: Parameters<NonNullable<BaseChatModel["bindTools"]>>[0],
  answerSchema?: Record<string, unknown>,
): ChatModelRunnable | undefined {
  if (isChatModel(model)) return bindChatModel(model, tools, answerSchema);
  if (model instanceof RunnableWithFallbacks) {
    const primary = bindToolsThrough(model.runnable, tools, answerSchema);
    const fallbacks = model.fallbacks.map((fallback) => bindToolsThrough(fallback, tools, answerSchema));
    if (!primary || fallbacks.some((fallback) => fallback === undefined)) return undefined;
    return primary.withFallbacks(fallbacks as ChatModelRunnable[]);
  }
  if (model instanceof RunnableBinding) {
    const bound = bindToolsThrough(model.bound, tools, answerSchema);
    if (!bound) return undefined;
    const fields = {
      bound,
      kwargs: model.kwargs ?? {},
      config: model.config,
      configFactories: model.configFactories,
    };
    if (model instanceof RunnableRetry) {
      const retry = model as unknown as { maxAttemptNumber: number; onFailedAttempt: never };
      // The wrapper's own class (a subclass keeps its way of retrying).
      const RetryClass = model.constructor as typeof RunnableRetry;
      return new RetryClass({
        ...fields,
        maxAttemptNumber: retry.maxAttemptNumber,
        onFailedAttempt: retry.onFailedAttempt,
      });
    }
    return new RunnableBinding(fields);
  }
  return undefined;
}

/** Providers whose chat completions take `response_format: { type: "json_schema" }`. */
const jsonSchemaFormatProviders = new Set(["openai", "azure_openai"]);

/** One chat model with the tools (when there are any) and, where it has one, its native answer format. */
function bindChatModel(
  model: BaseChatModel,
  tools: Parameters<NonNullable<BaseChatModel["bindTools"]>>[0],
  answerSchema: Record<string, unknown> | undefined,
): ChatModelRunnable | undefined {
  const native = answerSchema && nativeAnswerFormat(model, answerSchema);
  const kwargs = native
    ? ({ response_format: native } as Partial<BaseChatModel["ParsedCallOptions"]>)
    : undefined;
  if (tools.length === 0) return kwargs ? (model.withConfig(kwargs) as ChatModelRunnable) : model;
  if (typeof model.bindTools !== "function") return undefined;
  return model.bindTools(tools, kwargs) as ChatModelRunnable;
}

/**
 * OpenAI's native structured output for the final reply: only for an object at the root (what the
 * API takes), not strict (strict mode needs every property required), named "answer".
 */
function nativeAnswerFormat(model: BaseChatModel, schema: Record<string, unknown>) {
  if (!jsonSchemaFormatProviders.has(model._llmType()) || schema.type !== "object") return undefined;
  return { type: "json_schema", json_schema: { name: "answer", schema, strict: false } };
}

/**
 * How long one model call built from a "<provider>:<model>" string may take before it fails as a
 * timeout (seconds): a provider that accepts the connection and never answers cannot hold a run.
 */
export const defaultModelTimeoutSeconds = 90;

/**
 * Resolves a model option: a chat model or a Runnable is used as it is; "<provider>:<model>"
 * becomes that provider's chat model, its package loaded on demand (a missing package is a
 * ConfigError naming it). A model built here never retries on its own (`maxRetries: 0`, where
 * LangChain's default is 6 silent retries with back-off): wrap it in `withRetry()` for retries. Each
 * call times out after `options.timeoutSeconds` (default `defaultModelTimeoutSeconds`, 90 s; the
 * provider's client raises its timeout error, which a retry treats as retryable). The OpenAI key is checked here, at build time, so a missing key fails
 * before any container starts; OPENAI_BASE_URL (and ANTHROPIC_BASE_URL, the providers' own
 * variables) point a provider at a compatible local server.
 */
export async function loadModel(
  model: ModelOption,
  environment: NodeJS.ProcessEnv = process.env,
  options: { timeoutSeconds?: number | undefined } = {},
): Promise<ChatModelRunnable> {
  if (typeof model !== "string") return model as ChatModelRunnable;
  const { provider, name } = splitModelString(model);
  const timeout = Math.round((options.timeoutSeconds ?? defaultModelTimeoutSeconds) * 1000);
  if (provider === "openai") {
    return (await openAiModel(model, name, environment, timeout)) as ChatModelRunnable;
  }
  const entry = modelProviders[provider];
  if (!entry) {
    throw new ConfigError({
      message: `model provider ${JSON.stringify(provider)} is not known. Known providers: ${Object.keys(modelProviders).join(", ")}. Or pass a @langchain/core chat model instance.`,
    });
  }
  const key = entry.keyVariable;
  if (key && !environment[key]?.trim()) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} needs ${key}, which is not set. Export it (export ${key}=...).`,
    });
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(entry.packageName)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} needs the package ${entry.packageName}, which could not be loaded. Install it next to @codeaction/core: npm install ${entry.packageName}`,
      cause: error,
    });
  }
  const ModelClass = loaded[entry.className] as
    | (new (fields: {
        model: string;
        maxRetries: number;
        timeout: number;
      }) => BaseChatModel)
    | undefined;
  if (typeof ModelClass !== "function") {
    throw new ConfigError({
      message: `${entry.packageName} has no ${entry.className}; install a version that does (npm install ${entry.packageName}@latest).`,
    });
  }
  try {
    return new ModelClass({ model: name, maxRetries: 0, timeout }) as unknown as ChatModelRunnable;
  } catch (error) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)}: ${entry.className} refused its settings: ${(error as Error).message}`,
      cause: error,
    });
  }
}

function splitModelString(model: string): { provider: string; name: string } {
  const separator = model.indexOf(":");
  const provider = separator === -1 ? "" : model.slice(0, separator).trim();
  const name = separator === -1 ? "" : model.slice(separator + 1).trim();
  if (!provider || !name) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} is not "<provider>:<model>". Write it like "openai:gpt-5-mini" or "anthropic:claude-sonnet-4-5", or pass a @langchain/core chat model.`,
    });
  }
  return { provider, name };
}

/**
 * "openai:<model>": OPENAI_API_KEY is required and OPENAI_BASE_URL honoured. @langchain/openai is
 * loaded only here, so a process that never asks for it (a replayed model, another provider) does
 * not pay for loading it.
 */
async function openAiModel(
  model: string,
  name: string,
  environment: NodeJS.ProcessEnv,
  timeout: number,
): Promise<BaseChatModel> {
  const apiKey = environment.OPENAI_API_KEY?.trim();
  if (!apiKey) {
    throw new ConfigError({
      message: `model ${JSON.stringify(model)} needs OPENAI_API_KEY, which is not set. Export it (export OPENAI_API_KEY=sk-...); for a local OpenAI-compatible server set OPENAI_BASE_URL and any non-empty key.`,
    });
  }
  const baseURL = environment.OPENAI_BASE_URL?.trim();
  const { ChatOpenAI } = await import("@langchain/openai");
  return new ChatOpenAI({
    model: name,
    apiKey,
    maxRetries: 0,
    timeout,
    ...(baseURL ? { configuration: { baseURL } } : {}),
  });
}

/** The model's name for messages and logs (the wrapped chat model's, for a wrapper). */
export function modelName(model: unknown): string {
  const chat = underlyingChatModel(model);
  if (!chat) return (model as { getName?: () => string }).getName?.() ?? "a Runnable";
  const named = chat as unknown as { model?: unknown; modelName?: unknown };
  if (typeof named.model === "string") return named.model;
  if (typeof named.modelName === "string") return named.modelName;
  return chat._llmType();
}
