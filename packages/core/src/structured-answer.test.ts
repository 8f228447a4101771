import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compileResponseFormat, parseJsonAnswer } from "./structured-answer.ts";

const invoiceSchema = z.object({
  total: z.number(),
  lines: z.array(z.object({ sku: z.string(), quantity: z.number().int() })),
});

const invoiceJsonSchema = {
  type: "object",
  properties: {
    total: { type: "number" },
    lines: {
      type: "array",
      items: {
        type: "object",
        properties: { sku: { type: "string" }, quantity: { type: "integer" } },
        required: ["sku", "quantity"],
      },
    },
  },
  required: ["total", "lines"],
  additionalProperties: false,
};

describe("responseFormat checks an answer and names each path that differs", () => {
  it("a zod schema: the parsed value on success, the paths on a mismatch", () => {
    const shape = compileResponseFormat(invoiceSchema);
    expect(JSON.parse(shape.schemaText)).toMatchObject({ type: "object", required: ["total", "lines"] });
    expect(shape.schemaText).not.toContain("$schema");
    expect(shape.check('{"total": 12.5, "lines": [{"sku": "A-1", "quantity": 2}]}')).toEqual({
      ok: true,
      value: { total: 12.5, lines: [{ sku: "A-1", quantity: 2 }] },
    });
    const wrong = shape.check('{"total": "12.5", "lines": [{"sku": 7, "quantity": 2}]}');
    expect(wrong.ok).toBe(false);
    if (wrong.ok) return;
    expect(wrong.problem).toContain("does not match the required shape");
    expect(wrong.problem).toContain("total: Invalid input: expected number, received string");
    expect(wrong.problem).toContain("lines[0].sku: Invalid input: expected string, received number");
  });

  it("a JSON Schema: the same answers, the leaf errors with their paths (not the containers')", () => {
    const shape = compileResponseFormat(invoiceJsonSchema);
    expect(shape.check('{"total": 3, "lines": []}')).toEqual({ ok: true, value: { total: 3, lines: [] } });
    const wrong = shape.check('{"total": 3, "lines": [{"sku": "A", "quantity": 1.5}], "note": "x"}');
    expect(wrong.ok).toBe(false);
    if (wrong.ok) return;
    expect(wrong.problem).toContain(
      'lines[0].quantity: Instance type "number" is invalid. Expected "integer".',
    );
    expect(wrong.problem).toContain("note: not allowed here");
    expect(wrong.problem).not.toContain("does not match schema");
    const missing = shape.check('{"lines": []}');
    expect(missing.ok ? "" : missing.problem).toContain(
      '(the whole answer): Instance does not have required property "total"',
    );
  });

  it("an answer that is not JSON is refused with the parser's reason and its start", () => {
    const shape = compileResponseFormat(invoiceSchema);
    const result = shape.check("{'total': 3, 'lines': []}");
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.problem).toMatch(
      /^the answer is not JSON \(.+\); it starts with "\{'total': 3/,
    );
  });

  it("reads JSON inside a ```json fence, and refuses what is neither zod nor JSON Schema", () => {
    expect(parseJsonAnswer('```json\n{"a": 1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonAnswer("about 42").ok).toBe(false);
    expect(() => compileResponseFormat("a string" as never)).toThrow(/zod schema or a JSON Schema object/);
    // An object that names no schema keyword would accept anything (a createAgent strategy wrapper, say).
    expect(() => compileResponseFormat({ schema: invoiceSchema, strict: true })).toThrow(
      /neither a zod schema nor a JSON Schema \(it has none of type, properties/,
    );
  });
});
