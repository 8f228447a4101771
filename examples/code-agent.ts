// The seed's code agent: the model writes one Python program that calls load_orders() and
// computes the Q3 revenue per region in a container with no network. Run: node examples/code-agent.ts
import { buildAgent } from "@codeaction/core";
import pino from "pino";
import { exampleModel } from "./model.ts";
import { loadOrders, q3Question } from "./orders.ts";

// Print the program the model writes, and what it printed in the sandbox: the code-action debug lines, on stderr.
const logger = pino(
  { level: "debug" },
  {
    write(line: string) {
      const entry = JSON.parse(line);
      if (entry.name === "codeaction.code-action") process.stderr.write(`${entry.msg}\n`);
    },
  },
);

const agent = await buildAgent({
  model: await exampleModel("code-agent"),
  pattern: "code-action",
  extraTools: [loadOrders],
  logger,
});
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: q3Question }] });
  console.log(">>>", result.messages.at(-1)?.content);
} finally {
  await agent.close();
}
