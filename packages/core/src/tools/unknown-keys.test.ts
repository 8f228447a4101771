import { describe, expect, it } from "vitest";
import type { JsonSchema } from "./tool-spec.ts";
import { describeUnknownKeys, findUnknownKeys } from "./unknown-keys.ts";

const unknown = (schema: JsonSchema, args: unknown) => describeUnknownKeys(findUnknownKeys(schema, args));

describe("findUnknownKeys", () => {
  const sales: JsonSchema = {
    type: "object",
    properties: {
      filter: { type: "object", properties: { regions: { type: "array" }, since: { type: "string" } } },
      limit: { type: "integer" },
    },
    additionalProperties: false,
  };

  it("names a typo in a nested key and the closest valid one", () => {
    expect(unknown(sales, { filter: { region: ["EMEA"] } })).toBe(
      "filter.region: unknown key; did you mean 'regions'?",
    );
    expect(unknown(sales, { Limit: 3 })).toBe("Limit: unknown key; did you mean 'limit'?");
    expect(unknown(sales, { colour: 1 })).toBe("colour: unknown key; the keys are: filter, limit.");
    expect(unknown(sales, { filter: { regions: [] }, limit: 1 })).toBe("");
  });

  it("follows arrays, $refs and allOf", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: { items: { type: "array", items: { $ref: "#/$defs/item" } } },
      $defs: { item: { allOf: [{ properties: { sku: {} } }, { properties: { qty: {} } }] } },
    };
    expect(
      unknown(schema, {
        items: [
          { sku: "a", qty: 1 },
          { sku: "b", qtty: 2 },
        ],
      }),
    ).toBe("items[1].qtty: unknown key; did you mean 'qty'?");
  });

  it("picks the variant a const discriminator names in a union", () => {
    const schema: JsonSchema = {
      type: "object",
      properties: {
        shape: {
          oneOf: [
            { type: "object", properties: { kind: { const: "circle" }, radius: {} } },
            { type: "object", properties: { kind: { const: "rect" }, width: {}, height: {} } },
          ],
        },
      },
    };
    expect(unknown(schema, { shape: { kind: "circle", width: 2 } })).toBe(
      // width is a key of the rect variant, not of the circle this call names
      "shape.width: unknown key; the keys are: kind, radius.",
    );
    expect(unknown(schema, { shape: { kind: "rect", width: 2, height: 1 } })).toBe("");
  });

  it("allows extra keys where the schema does: additionalProperties true or a schema, patternProperties, no properties", () => {
    const open: JsonSchema = {
      type: "object",
      properties: {
        tags: { type: "object", additionalProperties: { type: "string" } },
        meta: { type: "object", properties: { a: {} }, additionalProperties: true },
        free: { type: "object" },
        patterned: { type: "object", properties: {}, patternProperties: { "^x-": {} } },
      },
    };
    expect(
      unknown(open, { tags: { any: "x" }, meta: { b: 1 }, free: { c: 1 }, patterned: { "x-a": 1 } }),
    ).toBe("");
    expect(unknown({ $ref: "#/nowhere" }, { anything: 1 })).toBe("");
  });
});
