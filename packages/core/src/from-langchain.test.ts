import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError } from "./errors/config-error.ts";
import { ToolInputError } from "./errors/tool-input-error.ts";
import { fromLangChainTool } from "./from-langchain.ts";

describe("fromLangChainTool", () => {
  const search = tool(async ({ query, limit }) => ({ query, limit, rows: [{ id: 1 }] }), {
    name: "search-orders",
    description: "Search orders.",
    schema: z.object({
      query: z.string().describe("Words to find."),
      limit: z.number().int().default(10),
      sort: z.enum(["asc", "desc"]).optional(),
    }),
  });
  const spec = fromLangChainTool(search);

  it("keeps the name and description and makes a JSON schema from zod", () => {
    expect(spec.name).toBe("search-orders");
    expect(spec.description).toBe("Search orders.");
    expect(spec.inputSchema.type).toBe("object");
    expect(spec.inputSchema.properties?.query).toMatchObject({
      type: "string",
      description: "Words to find.",
    });
    expect(spec.inputSchema.properties?.sort).toMatchObject({ enum: ["asc", "desc"] });
    expect(spec.inputSchema.properties?.limit).toMatchObject({ type: "integer", default: 10 });
    expect(spec.inputSchema.required).toEqual(["query"]);
    expect(spec.inputSchema.$schema).toBeUndefined();
  });

  it("validates arguments with the zod schema, applies defaults, and returns the value itself", async () => {
    expect(await spec.invoke({ query: "x" }, { runId: "r" })).toEqual({
      query: "x",
      limit: 10,
      rows: [{ id: 1 }],
    });
    const refused = await spec.invoke({ query: 5 }, { runId: "r" }).catch((error: unknown) => error);
    expect(ToolInputError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toMatch(
      /^Invalid input for tool 'search-orders': query: .+\. Call it again with arguments that match its schema\.$/,
    );
  });
});

describe("dates and bigints in a tool's input", () => {
  it("are refused at build time, naming the tool, each field and the fix", () => {
    const orders = tool(async () => [], {
      name: "orders_since",
      description: "Orders since a day.",
      schema: z.object({
        window: z.object({ since: z.date(), until: z.coerce.date().optional() }),
        ids: z.array(z.bigint()),
      }),
    });
    let error: unknown;
    try {
      fromLangChainTool(orders);
    } catch (thrown) {
      error = thrown;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(/^The tool 'orders_since' has an argument a program cannot send: /);
    expect(message).toContain("'window.since' is a z.date() (use z.iso.datetime() or z.iso.date()");
    expect(message).toContain("'window.until' is a z.date()");
    expect(message).toContain("'ids[]' is a z.bigint() (use z.number().int()");
  });
});
