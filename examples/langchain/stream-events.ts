// LangChain's streamEvents: one stream with the agent's own steps (on_chain_stream: model-start,
// program-start, tool-call, ..., answer) and the runs under it (on_chat_model_start and _end for each
// model call, on_tool_start and _end for each tool the program calls). Useful where a UI already
// speaks LangChain's event protocol. Run: node examples/langchain/stream-events.ts
import { buildAgent } from "@codeaction/core";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { exampleModel } from "../model.ts";

const exchangeRate = tool(async ({ currency }: { currency: string }) => (currency === "EUR" ? 0.92 : 1), {
  name: "exchange_rate",
  description: "How many units of `currency` one US dollar buys.",
  schema: z.object({ currency: z.string().describe("An ISO 4217 code such as EUR.") }),
});

const agent = await buildAgent({
  model: await exampleModel("langchain-callbacks"),
  pattern: "code-action",
  extraTools: [exchangeRate],
});
try {
  const events = agent.streamEvents("What is 250 US dollars in euros?", { version: "v2" });
  for await (const event of events) {
    if (event.event === "on_chain_stream") console.log(`step ${event.data.chunk.type}`);
    if (event.event === "on_chat_model_start") console.log(`model ${event.name} thinking`);
    if (event.event === "on_tool_start")
      console.log(`tool ${event.name} ${JSON.stringify(event.data.input)}`);
    if (event.event === "on_chain_end" && event.name === "CodeActionAgent") {
      console.log(`answer: ${event.data.output.answer}`);
    }
  }
} finally {
  await agent.close();
}
