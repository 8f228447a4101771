import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { createToolSearch, searchWords } from "./tool-search.ts";

function tool(name: string, description: string, properties: Record<string, string> = {}): ToolSpec {
  return {
    name,
    description,
    origin: "tool",
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        Object.entries(properties).map(([key, text]) => [key, { type: "string", description: text }]),
      ),
    },
    invoke: async () => null,
  };
}

const tools = [
  tool("list_orders", "Lists the orders placed in a month.", { month: "YYYY-MM" }),
  tool("getWeatherForecast", "Forecast temperature for a city.", { city: "the city's name" }),
  tool("convert-currency", "Converts an amount between two currencies at today's rate.", {
    amount: "the amount",
    from_currency: "ISO code",
  }),
  tool("customer_lookup", "Finds a customer.", { customer_id: "the customer's id", email: "an email" }),
  tool("order_totals", "Totals of the orders of a customer.", { customer_id: "the customer's id" }),
];

describe("searchWords", () => {
  it("splits names at underscores, dashes and case changes, in lower case, plurals made singular", () => {
    expect(searchWords("getWeatherForecast")).toEqual(["weather", "forecast"]);
    expect(searchWords("convert-currency HTTPServer list_orders")).toEqual([
      "convert",
      "currency",
      "http",
      "server",
      "list",
      "order",
    ]);
    expect(searchWords("currencies")).toEqual(["currency"]);
  });
});

describe("createToolSearch", () => {
  const search = createToolSearch(tools);

  it("ranks the tool whose name and description share the query's words first", () => {
    const names = search.search("exchange an amount between currencies").map((match) => match.tool.name);
    expect(names[0]).toBe("convert-currency");
    expect(search.search("temperature in a city")[0]?.stub.functionName).toBe("getWeatherForecast");
  });

  it("counts a name's words above a description's", () => {
    // "orders" is in list_orders' name and in order_totals' description and name: both match, and
    // the one whose name has more of the query comes first.
    const names = search.search("list orders").map((match) => match.tool.name);
    expect(names.slice(0, 2)).toEqual(["list_orders", "order_totals"]);
  });

  it("finds a tool by its argument names", () => {
    const names = search.search("email").map((match) => match.tool.name);
    expect(names).toEqual(["customer_lookup"]);
  });

  it("ranks an exact function or tool name first", () => {
    expect(search.search("order_totals")[0]?.tool.name).toBe("order_totals");
    expect(search.search("convert-currency")[0]?.stub.functionName).toBe("convert_currency");
    expect(search.search("convert_currency")[0]?.tool.name).toBe("convert-currency");
  });

  it("leaves out tools that share no word with the query, and keeps to the limit", () => {
    expect(search.search("zebra giraffe")).toEqual([]);
    expect(search.search("customer", { limit: 1 })).toHaveLength(1);
  });
});

describe("descriptions in other languages (issue 43 #11)", () => {
  const catalogue = [
    tool("bestellungen", "Listet die Bestellungen eines Monats für einen Kunden auf.", {
      monat: "Jahr und Monat",
    }),
    tool("meteo", "Prévisions météo détaillées pour une ville française.", { ville: "le nom de la ville" }),
    tool("pogoda", "Прогноз погоды для города на неделю.", { город: "название города" }),
    tool("tianqi", "查询城市的天气预报。", { 城市: "城市名称" }),
    tool("kairos", "Καιρός και θερμοκρασία για μια πόλη.", {}),
  ];
  const search = createToolSearch(catalogue);
  const best = (query: string) => search.search(query)[0]?.tool.name;

  it("keeps letters of every script, accents and marks included", () => {
    expect(searchWords("Prévisions météo")).toEqual(["prévision", "météo"]);
    expect(searchWords("Прогноз погоды")).toEqual(["прогноз", "погоды"]);
    expect(searchWords("नमस्ते दुनिया")).toEqual(["नमस्ते", "दुनिया"]);
    expect(searchWords("天气预报")).toEqual(["天气", "气预", "预报"]);
  });

  it("finds tools by words of their descriptions in German, French, Russian, Chinese and Greek", () => {
    expect(best("Bestellungen Kunden")).toBe("bestellungen");
    expect(best("météo ville")).toBe("meteo");
    expect(best("прогноз погоды")).toBe("pogoda");
    expect(best("天气")).toBe("tianqi");
    expect(best("θερμοκρασία")).toBe("kairos");
  });
});
