// Code mode from your own MCP server: createCodeModeServer gives the official SDK's Server offering
// list_functions and run_program over your tools, each program run in a fail-closed sandbox.
// Connect it to any transport: a StdioServerTransport for a desktop client, Streamable HTTP behind
// your own authentication, or (here, so the example ends by itself) a client in the same process.
// Run: node examples/code-mode-server.ts
import { createProgramRunner, fromLangChainTool } from "@codeaction/core";
import { createCodeModeServer } from "@codeaction/core/mcp-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { loadOrders } from "./orders.ts";

const runner = await createProgramRunner({ tools: [fromLangChainTool(loadOrders)], execTimeout: 50 });
const server = createCodeModeServer({ runner });
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await server.connect(serverSide);
const client = new Client({ name: "example-client", version: "1.0.0" });
await client.connect(clientSide);

const text = (reply: unknown) =>
  (reply as CallToolResult).content.map((part) => (part.type === "text" ? part.text : "")).join("");
const program = `
from collections import defaultdict
revenue = defaultdict(float)
for order in load_orders():
    if "2026-07-01" <= order["date"] <= "2026-09-30":
        revenue[order["region"]] += order["quantity"] * order["unit_price"]
print("RESULT:", sorted(((round(total), region) for region, total in revenue.items()), reverse=True))
`;
try {
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((tool) => tool.name).join(", ")}`);
  console.log(text(await client.callTool({ name: "list_functions", arguments: {} })));
  console.log(`>>> ${text(await client.callTool({ name: "run_program", arguments: { program } }))}`);
} finally {
  await client.close();
  await server.close();
  await runner.close();
}
