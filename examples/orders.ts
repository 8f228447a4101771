import { readFile } from "node:fs/promises";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

export type Order = {
  order_id: string;
  date: string;
  region: string;
  product: string;
  quantity: number;
  unit_price: number;
};

const ordersFile = new URL("./data/orders.csv", import.meta.url);

/** The seed's 500 orders, with real numbers (the file has no quoted cells, so a split is enough). */
export async function readOrders(): Promise<Order[]> {
  const [header = "", ...lines] = (await readFile(ordersFile, "utf8")).trim().split(/\r?\n/);
  const columns = header.split(",");
  return lines.map((line) => {
    const row = Object.fromEntries(line.split(",").map((cell, index) => [columns[index], cell]));
    return { ...row, quantity: Number(row.quantity), unit_price: Number(row.unit_price) } as Order;
  });
}

/** The tool the model sees: its description is all the model knows about the data, so name every field. */
export const loadOrders = tool(readOrders, {
  name: "load_orders",
  description:
    "Return every order as a dict: order_id, date (YYYY-MM-DD), region, product, quantity, unit_price.",
  schema: z.object({}),
});

export const q3Question =
  "What was the revenue per region in Q3 2026 (July to September)? " +
  "Revenue is quantity times unit price. Sort from highest to lowest.";
