import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildAgent } from "../src/build-agent.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";

// Issue 43 #11: a program calls a tool of a pydantic-shaped MCP server ($defs, $ref, allOf, anyOf
// with null, an enum) with nested models, one built with the TypedDict its stub defines, and the
// server receives them intact.
const server = fileURLToPath(new URL("./fixtures/pydantic-server.ts", import.meta.url));

const program = `\`\`\`python
import json

received = place_order(
    customer={"name": "Ada", "email": "ada@example.invalid", "address": {"street": "1 Loop Rd", "city": "Lund"}},
    items=[{"sku": "KB-01", "quantity": 2}, {"sku": "MS-02", "quantity": 1}],
    priority="high",
    gift_address=Address(street="2 Ring St", city="Malmo", postcode=None),
)
print("RESULT: " + json.dumps(received))
\`\`\``;

describe("a pydantic MCP server's tool called from a code-action program", () => {
  it("receives the nested models as the program built them", async () => {
    const model = new ScriptedChatModel([program]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      servers: { orders: { command: process.execPath, args: [server] } },
    });
    const result = await agent.invoke({
      messages: [{ role: "user", content: "Order two keyboards for Ada." }],
    });
    expect(JSON.parse(result.answer)).toEqual({
      tool: "place_order",
      arguments: {
        customer: {
          name: "Ada",
          email: "ada@example.invalid",
          address: { street: "1 Loop Rd", city: "Lund" },
        },
        items: [
          { sku: "KB-01", quantity: 2 },
          { sku: "MS-02", quantity: 1 },
        ],
        priority: "high",
        gift_address: { street: "2 Ring St", city: "Malmo", postcode: null },
        // An Optional left out goes as its default, null, which pydantic reads as left out.
        note: null,
      },
    });
    expect(result.attempts.at(-1)?.toolCalls.map((call) => [call.tool, call.status])).toEqual([
      ["place_order", "ok"],
    ]);
  });
});
