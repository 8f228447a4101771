import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { callTool } from "./call-tool.ts";

function toolReturning(value: unknown): ToolSpec {
  return {
    name: "lookup",
    description: "Looks something up.",
    origin: "tool",
    inputSchema: {
      type: "object",
      properties: { filter: { type: "object", properties: { regions: { type: "array" } } } },
      additionalProperties: false,
    },
    invoke: async () => value,
  };
}

const call = (tool: ToolSpec, args: unknown) =>
  callTool({ id: "c1", tool, name: tool.name, args, runId: "r", availableTools: [tool.name] });

describe("the tools pattern maps values and checks keys as the bridge does", () => {
  it("Map, Set, bigint, NaN, Date and bytes become the documented JSON text", async () => {
    const value = {
      counts: new Map([["EMEA", 2n ** 60n]]),
      tags: new Set(["a"]),
      ratio: Number.NaN,
      at: new Date(0),
      raw: Buffer.from("hi"),
    };
    const { record, content } = await call(toolReturning(value), {});
    expect(record.status).toBe("ok");
    expect(content).toBe(
      '{"counts":{"EMEA":1152921504606846976},"tags":["a"],"ratio":NaN,"at":"1970-01-01T00:00:00.000Z","raw":{"\\u0000codeaction":"bytes","base64":"aGk="}}',
    );
    expect(record.result).toEqual({
      counts: { EMEA: "1152921504606846976" },
      tags: ["a"],
      ratio: "NaN",
      at: "1970-01-01T00:00:00.000Z",
      raw: { base64: "aGk=" },
    });
  });

  it("a class instance is an error naming the tool and the path", async () => {
    class Customer {
      name = "Ada";
    }
    const { record, content } = await call(toolReturning({ rows: [new Customer()] }), {});
    expect(record.status).toBe("error");
    expect(content).toBe(
      "Error: The tool 'lookup' returned a value that cannot be passed on: result.rows[0] is a Customer instance with no toJSON(). Fix the tool: return plain objects, or give the class a toJSON() method.",
    );
  });

  it("an unknown nested key is refused before the tool runs", async () => {
    const { record, content } = await call(toolReturning(1), { filter: { region: ["EMEA"] } });
    expect(record.status).toBe("invalid");
    expect(content).toBe(
      "Error: Invalid input for tool 'lookup': filter.region: unknown key; did you mean 'regions'? Call it again with arguments that match its schema.",
    );
  });
});
