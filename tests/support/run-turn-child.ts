/**
 * One code-action turn in a process of its own, for the fault tests. The program calls `mark()`
 * first (the child prints "MARK" when it arrives: the program is running in its container), then
 * sleeps. Prints "DONE <status>" or "FAILED <name>" at the end.
 * Usage: node tests/support/run-turn-child.ts <backend> <execTimeout seconds>
 */
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const backend = (process.argv[2] ?? "docker") as "docker" | "gvisor";
const execTimeout = Number(process.argv[3] ?? "5");
const mark = tool(
  async () => {
    process.stdout.write("MARK\n");
    return "marked";
  },
  { name: "mark", description: "Says the program is running.", schema: z.object({}) },
);
const program = "import time\nmark()\ntime.sleep(10**6)\n";
const agent = await buildAgent({
  model: new ScriptedChatModel([`\`\`\`python\n${program}\`\`\``]),
  pattern: "code-action",
  // No warm pool: the parent counts this run's one container.
  sandbox: { backend, network: "none", pool: 0 },
  extraTools: [mark],
  codeAction: { execTimeout, maxRepairs: 0 },
});
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: "Wait." }] });
  process.stdout.write(`DONE ${result.status}\n`);
} catch (error) {
  process.stdout.write(`FAILED ${(error as Error).name}\n`);
} finally {
  await agent.close().catch(() => undefined);
}
process.exit(0);
