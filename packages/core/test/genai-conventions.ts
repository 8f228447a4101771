import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

// The GenAI attributes and well-known values the OpenTelemetry semantic conventions define, taken
// from open-telemetry/semantic-conventions docs/registry/attributes/gen-ai.md at commit
// 02f1d35df5d8 (semantic conventions v1.40 line, GenAI status Development), deprecated
// attributes (gen_ai.system, gen_ai.prompt, gen_ai.completion, ...) left out. Every gen_ai.*
// attribute a span of ours sets must be one of these.

export const genAiAttributes = new Set([
  "gen_ai.agent.description",
  "gen_ai.agent.id",
  "gen_ai.agent.name",
  "gen_ai.conversation.id",
  "gen_ai.data_source.id",
  "gen_ai.embeddings.dimension.count",
  "gen_ai.evaluation.explanation",
  "gen_ai.evaluation.name",
  "gen_ai.evaluation.score.label",
  "gen_ai.evaluation.score.value",
  "gen_ai.input.messages",
  "gen_ai.operation.name",
  "gen_ai.output.messages",
  "gen_ai.output.type",
  "gen_ai.prompt.name",
  "gen_ai.provider.name",
  "gen_ai.request.choice.count",
  "gen_ai.request.encoding_formats",
  "gen_ai.request.frequency_penalty",
  "gen_ai.request.max_tokens",
  "gen_ai.request.model",
  "gen_ai.request.presence_penalty",
  "gen_ai.request.seed",
  "gen_ai.request.stop_sequences",
  "gen_ai.request.temperature",
  "gen_ai.request.top_k",
  "gen_ai.request.top_p",
  "gen_ai.response.finish_reasons",
  "gen_ai.response.id",
  "gen_ai.response.model",
  "gen_ai.retrieval.documents",
  "gen_ai.retrieval.query.text",
  "gen_ai.system_instructions",
  "gen_ai.token.type",
  "gen_ai.tool.call.arguments",
  "gen_ai.tool.call.id",
  "gen_ai.tool.call.result",
  "gen_ai.tool.definitions",
  "gen_ai.tool.description",
  "gen_ai.tool.name",
  "gen_ai.tool.type",
  "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
]);

/** `gen_ai.operation.name`'s well-known values (the conventions allow others only when none applies). */
export const genAiOperations = new Set([
  "chat",
  "create_agent",
  "embeddings",
  "execute_tool",
  "generate_content",
  "invoke_agent",
  "retrieval",
  "text_completion",
]);

/** What a set of spans does outside the conventions: unknown gen_ai.* keys, unknown operations, chat spans without a provider. */
export function conventionProblems(spans: ReadableSpan[]): string[] {
  const problems: string[] = [];
  for (const span of spans) {
    for (const key of Object.keys(span.attributes)) {
      if (key.startsWith("gen_ai.") && !genAiAttributes.has(key)) problems.push(`${span.name}: ${key}`);
    }
    const operation = span.attributes["gen_ai.operation.name"];
    if (operation !== undefined && !genAiOperations.has(String(operation))) {
      problems.push(`${span.name}: gen_ai.operation.name = ${String(operation)}`);
    }
    if (operation === "chat" && typeof span.attributes["gen_ai.provider.name"] !== "string") {
      problems.push(`${span.name}: no gen_ai.provider.name`);
    }
  }
  return problems;
}
