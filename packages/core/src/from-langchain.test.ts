import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
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
