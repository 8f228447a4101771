// Steps and threads: the model looks at the data before it answers (steps), and a follow-up
// question finds what the first one computed (a thread), with load_orders called once for both.
// Run: node examples/steps-and-threads.ts
import { buildAgent } from "@codeaction/core";
import { exampleModel } from "./model.ts";
import { loadOrders } from "./orders.ts";

const agent = await buildAgent({
  model: await exampleModel("steps-and-threads"),
  pattern: "code-action",
  extraTools: [loadOrders],
  // Up to 4 programs a question, all in one live interpreter, kept per thread_id between questions.
  codeAction: { maxSteps: 4, state: "thread" },
});
const thread = { configurable: { thread_id: "analyst-1" } };
try {
  for (const question of [
    "What was the revenue per region in Q3 2026 (July to September)?",
    "And which product sold the most units in that quarter?",
  ]) {
    const result = await agent.invoke({ messages: [{ role: "user", content: question }] }, thread);
    const steps = result.attempts.map((attempt) => `step ${attempt.step}: ${attempt.status}`).join(", ");
    console.log(`>>> ${question}\n${result.answer}\n(${steps}; tool calls: ${result.toolCalls.length})`);
  }
} finally {
  await agent.close();
}
