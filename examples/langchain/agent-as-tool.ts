// The agent as a tool inside LangChain's own createAgent: `asTool()` takes `{ question }` and answers
// with the turn's answer. The outer agent's callbacks and signal reach the inner turn, so tracing
// nests and cancelling the outer run cancels the program. Run: node examples/langchain/agent-as-tool.ts
import { buildAgent } from "@codeaction/core";
import { createAgent } from "langchain";
import { exampleModel } from "../model.ts";
import { loadOrders } from "../orders.ts";

const analyst = await buildAgent({
  model: await exampleModel("langchain-analyst"),
  pattern: "code-action",
  extraTools: [loadOrders],
});
try {
  const assistant = createAgent({
    model: await exampleModel("langchain-assistant"),
    tools: [
      analyst.asTool({
        name: "orders_analyst",
        description:
          "Answers questions about the orders by computing over all of them. Give the whole question.",
      }),
    ],
    systemPrompt: "You are a sales assistant. Use orders_analyst for any number about orders.",
  });
  const state = await assistant.invoke({
    messages: [{ role: "user", content: "How many orders were placed in EMEA?" }],
  });
  for (const message of state.messages) console.log(`${message.getType()}: ${message.text}`);
} finally {
  await analyst.close();
}
