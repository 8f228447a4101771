/**
 * The providers a "<provider>:<model>" string may name: the same names LangChain.js's universal
 * model initialisation (`initChatModel`) knows, each with the package and class that serve it.
 * The package is loaded only when a string names its provider.
 */
export const modelProviders: Record<
  string,
  { packageName: string; className: string; keyVariable?: string }
> = {
  openai: { packageName: "@langchain/openai", className: "ChatOpenAI", keyVariable: "OPENAI_API_KEY" },
  azure_openai: { packageName: "@langchain/openai", className: "AzureChatOpenAI" },
  anthropic: {
    packageName: "@langchain/anthropic",
    className: "ChatAnthropic",
    keyVariable: "ANTHROPIC_API_KEY",
  },
  cohere: { packageName: "@langchain/cohere", className: "ChatCohere", keyVariable: "COHERE_API_KEY" },
  google: { packageName: "@langchain/google", className: "ChatGoogle" },
  "google-vertexai": { packageName: "@langchain/google-vertexai", className: "ChatVertexAI" },
  "google-vertexai-web": { packageName: "@langchain/google-vertexai-web", className: "ChatVertexAI" },
  "google-genai": {
    packageName: "@langchain/google-genai",
    className: "ChatGoogleGenerativeAI",
    keyVariable: "GOOGLE_API_KEY",
  },
  ollama: { packageName: "@langchain/ollama", className: "ChatOllama" },
  mistral: {
    packageName: "@langchain/mistralai",
    className: "ChatMistralAI",
    keyVariable: "MISTRAL_API_KEY",
  },
  mistralai: {
    packageName: "@langchain/mistralai",
    className: "ChatMistralAI",
    keyVariable: "MISTRAL_API_KEY",
  },
  groq: { packageName: "@langchain/groq", className: "ChatGroq", keyVariable: "GROQ_API_KEY" },
  bedrock: { packageName: "@langchain/aws", className: "ChatBedrockConverse" },
  aws: { packageName: "@langchain/aws", className: "ChatBedrockConverse" },
  deepseek: {
    packageName: "@langchain/deepseek",
    className: "ChatDeepSeek",
    keyVariable: "DEEPSEEK_API_KEY",
  },
  xai: { packageName: "@langchain/xai", className: "ChatXAI", keyVariable: "XAI_API_KEY" },
  cerebras: {
    packageName: "@langchain/cerebras",
    className: "ChatCerebras",
    keyVariable: "CEREBRAS_API_KEY",
  },
  fireworks: {
    packageName: "@langchain/fireworks",
    className: "ChatFireworks",
    keyVariable: "FIREWORKS_API_KEY",
  },
  together: {
    packageName: "@langchain/together-ai",
    className: "ChatTogetherAI",
    keyVariable: "TOGETHER_AI_API_KEY",
  },
  perplexity: {
    packageName: "@langchain/perplexity",
    className: "ChatPerplexity",
    keyVariable: "PERPLEXITY_API_KEY",
  },
};
