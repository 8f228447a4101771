// A user's ESM program against the installed packages: its own tool() and zod, the scripted model
// from @codeaction/core/testing, one code-action turn in a real container that calls the tool.
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const multiply = tool(async ({ a, b }) => a * b, {
  name: "multiply",
  description: "Multiplies two numbers.",
  schema: z.object({ a: z.number(), b: z.number() }),
});
const program = 'product = multiply(a=6, b=7)\nprint("RESULT: " + str(product))';
const model = new ScriptedChatModel([`Here is the program.\n\n\`\`\`python\n${program}\n\`\`\``]);

const agent = await buildAgent({ model, pattern: "code-action", extraTools: [multiply] });
try {
  const result = await agent.invoke({ messages: [{ role: "user", content: "What is 6 times 7?" }] });
  const calls = result.attempts.flatMap((attempt) =>
    attempt.toolCalls.map((call) => `${call.tool}:${call.status}`),
  );
  console.log(JSON.stringify({ answer: result.answer, status: result.status, calls }));
} finally {
  await agent.close();
}
