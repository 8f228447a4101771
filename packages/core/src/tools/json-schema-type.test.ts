import { describe, expectTypeOf, it } from "vitest";
import { buildAgent } from "../build-agent.ts";
import type { JsonSchemaType } from "./json-schema-type.ts";

// Type-level checks: `pnpm typecheck` (tsc -b, which includes this file) fails on a wrong type.

const order = {
  type: "object",
  properties: {
    region: { type: "string", enum: ["EMEA", "APAC"] },
    total: { type: "number" },
    lines: {
      type: "array",
      items: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer" } },
        required: ["sku"],
      },
    },
    note: { type: ["string", "null"] },
    kind: { const: "order" },
    paid: { anyOf: [{ type: "boolean" }, { type: "null" }] },
  },
  required: ["region", "total", "lines"],
} as const;

type Order = {
  region: "EMEA" | "APAC";
  total: number;
  lines: { sku: string; quantity?: number }[];
  note?: string | null;
  kind?: "order";
  paid?: boolean | null;
};

describe("JsonSchemaType", () => {
  it("types a literal JSON Schema's objects, arrays, enums, consts, unions and nullable types", () => {
    expectTypeOf<JsonSchemaType<typeof order>>().toEqualTypeOf<Order>();
    expectTypeOf<JsonSchemaType<{ type: "array" }>>().toEqualTypeOf<unknown[]>();
    expectTypeOf<JsonSchemaType<{ type: "object" }>>().toEqualTypeOf<Record<string, unknown>>();
  });

  it("promises nothing it does not check: $ref, allOf and untyped schemas are unknown", () => {
    expectTypeOf<JsonSchemaType<{ $ref: "#/$defs/x" }>>().toBeUnknown();
    expectTypeOf<JsonSchemaType<{ allOf: [{ type: "string" }] }>>().toBeUnknown();
    expectTypeOf<JsonSchemaType<Record<string, unknown>>>().toBeUnknown();
  });

  it("buildAgent infers result.structured from a JSON Schema written inline, no `as const` needed", () => {
    // Never called: only its types are checked.
    const typedAnswer = async () => {
      const agent = await buildAgent({
        model: "openai:gpt-5-mini",
        responseFormat: {
          type: "object",
          properties: { total: { type: "number" }, region: { type: "string" } },
          required: ["total"],
        },
      });
      const result = await agent.invoke("What was the Q3 revenue?");
      expectTypeOf(result.structured).toEqualTypeOf<{ total: number; region?: string }>();
    };
    expectTypeOf(typedAnswer).toBeFunction();
  });
});
