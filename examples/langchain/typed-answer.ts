// A typed answer: `responseFormat` takes a zod schema (or a JSON Schema), as LangChain's createAgent
// does. The model is told the shape; a RESULT of another shape goes back to it naming each path;
// `result.structured` has the schema's type. Run: node examples/langchain/typed-answer.ts
import { buildAgent } from "@codeaction/core";
import { z } from "zod";
import { exampleModel } from "../model.ts";
import { loadOrders, q3Question } from "../orders.ts";

const revenueByRegion = z.array(z.object({ region: z.string(), revenue: z.number() }));

const agent = await buildAgent({
  model: await exampleModel("langchain-typed-answer"),
  pattern: "code-action",
  extraTools: [loadOrders],
  responseFormat: revenueByRegion,
});
try {
  const result = await agent.invoke(q3Question);
  // result.structured is { region: string; revenue: number }[]: no parsing, no casts.
  for (const { region, revenue } of result.structured) {
    console.log(`${region.padEnd(14)} ${revenue.toFixed(2).padStart(10)}`);
  }
  console.log(`attempts: ${result.attempts.map((attempt) => attempt.status).join(", ")}`);
} finally {
  await agent.close();
}
