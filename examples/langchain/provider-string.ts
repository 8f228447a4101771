// A provider string other than openai: "anthropic:claude-sonnet-4-5" loads @langchain/anthropic on
// demand (a missing package or ANTHROPIC_API_KEY is a ConfigError naming it). Every provider that
// LangChain's initChatModel knows works the same way. Run: ANTHROPIC_API_KEY=... node examples/langchain/provider-string.ts
import { buildAgent } from "@codeaction/core";
import { loadOrders } from "../orders.ts";

const agent = await buildAgent({
  model: "anthropic:claude-sonnet-4-5",
  pattern: "code-action",
  extraTools: [loadOrders],
});
try {
  const result = await agent.invoke("How many orders are there in all?");
  console.log(`answer: ${result.answer}`);
  console.log(`tokens: ${result.usage.inputTokens} in, ${result.usage.outputTokens} out`);
} finally {
  await agent.close();
}
