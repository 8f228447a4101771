import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createLoadOrders, type Order } from "../../test/helpers.ts";
import { ScriptedChatModel } from "../testing/index.ts";
import { fromLangChainTool } from "../tools/from-langchain.ts";
import type { AgentResult } from "../types.ts";
import { createToolsRunner } from "./runner.ts";

// The seed's chat-agent comparison: the same question and the same load_orders tool as the
// code-action run, through the ordinary tool loop. The model reads all 500 rows in one tool result.
const { loadOrders } = createLoadOrders();

// What gpt-5-mini answered in the seed's run (two of the four totals are wrong).
const seedAnswer = `I loaded the orders and summed quantity * unit_price for orders dated in Q3 2026 (July–September). Revenue by region (highest → lowest):

- North America: $109,555
- LATAM: $79,585
- EMEA: $77,689
- APAC: $65,023`;

describe("the seed's chat-agent comparison", () => {
  it("calls load_orders once and hands all 500 rows to the model, traced like the seed", async () => {
    const trace: string[] = [];
    const logger = pino({ level: "info" }, { write: (line: string) => trace.push(JSON.parse(line).msg) });
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "load_orders", args: {} }] }, seedAnswer]);
    const runner = createToolsRunner({
      model,
      tools: [fromLangChainTool(loadOrders)],
      traceTools: true,
      logger,
    });

    const question = new HumanMessage(
      "What was the revenue per region in Q3 2026 (July to September)? " +
        "Revenue is quantity times unit price. Sort from highest to lowest.",
    );
    const stream = runner.stream([question], "chat-agent");
    let result: AgentResult | undefined;
    for (let next = await stream.next(); ; next = await stream.next()) {
      if (next.done) {
        result = next.value;
        break;
      }
    }

    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ tool: "load_orders", args: {}, status: "ok" });
    expect(result.answer).toBe(seedAnswer);

    // What the model read: the 500 rows, with real numbers, enough to compute the right totals.
    const toolMessage = model.calls[1]?.messages.at(-1);
    expect(toolMessage).toBeInstanceOf(ToolMessage);
    const rows = JSON.parse(String(toolMessage?.content)) as Order[];
    expect(rows).toHaveLength(500);
    expect(rows[0]).toEqual({
      order_id: "O-0001",
      date: "2026-04-17",
      region: "EMEA",
      product: "Starter",
      quantity: 3,
      unit_price: 29,
    });
    const totals: Record<string, number> = {};
    for (const row of rows) {
      if (row.date >= "2026-07-01" && row.date <= "2026-09-30") {
        totals[row.region] = (totals[row.region] ?? 0) + row.quantity * row.unit_price;
      }
    }
    expect(totals).toEqual({ "North America": 108664, LATAM: 81328, EMEA: 77689, APAC: 65023 });

    expect(trace).toEqual([
      "-> Invoking tool: load_orders with {}",
      `<- Tool result from load_orders: ${JSON.stringify(rows).slice(0, 200)}…`,
    ]);
    expect(trace[1]).toMatch(
      /^<- Tool result from load_orders: \[\{"order_id":"O-0001","date":"2026-04-17","region":"EMEA","product":"Starter","quantity":3,"unit_price":29\},/,
    );
  });
});
