import { fileURLToPath } from "node:url";
import { tool } from "@langchain/core/tools";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";

// agent.describeTools() is what the model is given (issue 31 item 8): the text, verbatim, in the
// code-action prompt the model received, for a tool of one's own and an MCP server's tools.

const everything = fileURLToPath(
  new URL("../../cli/node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);
const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
  name: "add",
  description: "Add two numbers.",
  schema: z.object({ a: z.number().describe("the first number"), b: z.number() }),
});

describe("agent.describeTools() (real engine, MCP server from npm)", () => {
  test("is the stub text of the prompt the model received, MCP tools included", async () => {
    const model = new ScriptedChatModel([programReply('print("RESULT:", add(a=2, b=3))')]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      extraTools: [add],
      servers: { everything: { command: process.execPath, args: [everything, "stdio"] } },
    });
    const result = await agent.invoke("What is 2 + 3?");
    expect(result.answer).toBe("5");
    const described = agent.describeTools();
    expect(described).toMatch(/^def add\(\*, a: (float|int), b: (float|int)\)/);
    expect(described).toContain("a: the first number");
    expect(described).toMatch(/^def echo\(/m);
    const system = String(model.calls[0]?.messages[0]?.content);
    expect(system).toContain(`\`\`\`python\n${described}\n\`\`\``);
  });
});
