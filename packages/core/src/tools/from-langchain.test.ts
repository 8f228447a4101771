import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolInputError } from "../errors/tool-input-error.ts";
import { renderStubSignatures } from "../prompt/python-stubs.ts";
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

describe("a LangChain tool's declared output", () => {
  const rowsSchema = z
    .object({
      rows: z.array(z.object({ id: z.number().int(), placedAt: z.date() })).describe("Matching orders"),
      total: z.bigint(),
    })
    .describe("The matching orders");

  it("metadata.outputSchema (zod) becomes the stub's return type and its Returns section", () => {
    const orders = tool(async () => ({ rows: [], total: 0n }), {
      name: "orders",
      description: "Lists orders.",
      schema: z.object({}),
      metadata: { outputSchema: rowsSchema },
    });
    const spec = fromLangChainTool(orders);
    expect(spec.outputSchema).toMatchObject({
      type: "object",
      description: "The matching orders",
      properties: { total: { type: "integer" } },
    });
    const stub = renderStubSignatures([spec]);
    expect(stub).toContain("def orders() -> dict[str, Any]:");
    expect(stub).toContain("Returns:\n        dict[str, Any]: The matching orders.");
    expect(stub).toContain("rows (list[dict[str, Any]]): Matching orders.");
    // A Date comes back as its ISO string (the value mapping), so the answer's type is str.
    expect(stub).toContain("placedAt (str, format: date-time)");
    expect(stub).toContain("total (int)");
  });

  it("a JSON schema works the same; a tool without one returns Any; anything else is refused", () => {
    const counted = (metadata?: Record<string, unknown>) =>
      tool(async () => 3, {
        name: "count",
        description: "Counts.",
        schema: z.object({}),
        ...(metadata ? { metadata } : {}),
      });
    const declared = fromLangChainTool(counted({ outputSchema: { type: "integer", minimum: 0 } }));
    expect(renderStubSignatures([declared])).toContain("def count() -> int:");
    expect(renderStubSignatures([fromLangChainTool(counted())])).toContain("def count() -> Any:");
    expect(() => fromLangChainTool(counted({ outputSchema: "a number" }))).toThrow(
      /^The tool 'count' has a metadata.outputSchema that is neither a zod schema nor a JSON schema/,
    );
  });
});
