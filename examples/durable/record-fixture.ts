// Records a run against live tools as a test fixture: run it once (node examples/durable/record-fixture.ts),
// commit the JSON it writes, and replay-fixture.docker.test.ts replays it with no model and no tools.
// Here the "live" tool is an in-memory order book and the model is scripted; in an application they
// are your real tool and model, and the record is taken from a real run.
import { writeFileSync } from "node:fs";
import { buildAgent, recordRun } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const orders: Record<string, { amount: number; status: string }[]> = {
  ada: [
    { amount: 120, status: "paid" },
    { amount: 35.5, status: "refunded" },
  ],
  grace: [{ amount: 80, status: "paid" }],
};
const ordersOf = tool(async ({ customer }) => orders[customer] ?? [], {
  name: "orders_of",
  description: "A customer's orders.",
  schema: z.object({ customer: z.string() }),
});
const program = `
paid = {name: sum(o["amount"] for o in orders_of(customer=name) if o["status"] == "paid") for name in ["ada", "grace"]}
print("RESULT:", max(paid, key=paid.get), paid[max(paid, key=paid.get)])
`;

const agent = await buildAgent({
  model: new ScriptedChatModel([`\`\`\`python\n${program}\`\`\``]),
  pattern: "code-action",
  sandbox: { network: "none", pool: 0 },
  extraTools: [ordersOf],
});
try {
  const result = await agent.invoke("Which customer paid the most?");
  const file = new URL("./top-customer.run.json", import.meta.url);
  writeFileSync(file, `${JSON.stringify(recordRun(result, agent.tools), null, 2)}\n`);
  console.log(`recorded ${result.runId}: ${result.answer}`);
} finally {
  await agent.close();
}
