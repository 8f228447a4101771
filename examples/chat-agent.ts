// The seed's comparison: the same question and tool through the ordinary tool-calling loop. The model
// reads all 500 rows and does the sums itself; the plain-code check below shows whether it got them
// right. Run: node examples/chat-agent.ts
import { buildAgent } from "@codeaction/core";
import { exampleModel } from "./model.ts";
import { loadOrders, q3Question, readOrders } from "./orders.ts";

const agent = await buildAgent({
  model: await exampleModel("chat-agent"),
  traceTools: true, // prints each tool call and a shortened result on stderr
  extraTools: [loadOrders],
});
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: q3Question }] });
  console.log(">>>", result.messages.at(-1)?.content);
} finally {
  await agent.close();
}

// The same calculation in plain code, without any model (in cents, so the sums are exact).
const cents = new Map<string, number>();
for (const order of await readOrders()) {
  if (order.date >= "2026-07-01" && order.date <= "2026-09-30") {
    cents.set(
      order.region,
      (cents.get(order.region) ?? 0) + order.quantity * Math.round(order.unit_price * 100),
    );
  }
}
console.log("\nChecked in plain code:");
for (const [region, total] of [...cents].sort((left, right) => right[1] - left[1])) {
  console.log(`${region}: ${(total / 100).toLocaleString("en-US", { minimumFractionDigits: 2 })}`);
}
