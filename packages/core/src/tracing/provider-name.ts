import { underlyingChatModel } from "../model/model.ts";

/**
 * `gen_ai.provider.name` for a chat model, by its LangChain class: the well-known values of the
 * OpenTelemetry GenAI conventions where one applies ("openai" for `openai:gpt-5-mini`), else the
 * model's own `_llmType()` (a custom value, as the conventions allow: "ollama", "scripted").
 */
const providersByClass: Record<string, string> = {
  ChatOpenAI: "openai",
  AzureChatOpenAI: "azure.ai.openai",
  ChatAnthropic: "anthropic",
  ChatCohere: "cohere",
  ChatGoogle: "gcp.gen_ai",
  ChatGoogleGenerativeAI: "gcp.gemini",
  ChatVertexAI: "gcp.vertex_ai",
  ChatMistralAI: "mistral_ai",
  ChatGroq: "groq",
  ChatBedrockConverse: "aws.bedrock",
  ChatDeepSeek: "deepseek",
  ChatXAI: "x_ai",
  ChatPerplexity: "perplexity",
};

/** The provider of `model`'s chat model (through retries, fallbacks and bindings), or undefined for another Runnable. */
export function providerName(model: unknown): string | undefined {
  const chat = underlyingChatModel(model);
  if (!chat) return undefined;
  const type = chat.constructor as { lc_name?: () => string; name?: string };
  const className = type.lc_name?.() ?? type.name ?? "";
  return providersByClass[className] ?? chat._llmType();
}
