import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { buildStubs, renderStubSignatures, renderStubsModule } from "./python-stubs.ts";
import { pythonType } from "./python-types.ts";

function tool(name: string, inputSchema: ToolSpec["inputSchema"], extra: Partial<ToolSpec> = {}): ToolSpec {
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema,
    origin: "tool",
    invoke: async () => null,
    ...extra,
  };
}

/** Runs the stubs module in the host's python3 with a fake `_call` that returns what it was sent. */
function callInPython(tools: ToolSpec[], program: string): string {
  const source = [
    "import json",
    "class ToolError(Exception): pass",
    "class ToolDenied(Exception): pass",
    "class ToolCallLimitExceeded(Exception): pass",
    "def _call(name, arguments):",
    "    return {'tool': name, 'args': arguments}",
    renderStubsModule(tools),
    program,
  ].join("\n");
  return execFileSync("python3", ["-I", "-c", source], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

// Each test starts the host python3 once or twice; a busy machine makes that slow.
describe("python stubs", { timeout: 60_000 }, () => {
  it("makes dashed, keyword and digit-first names valid and maps them back in _call", () => {
    const tools = [
      tool("get-user", {
        type: "object",
        properties: { "user-id": { type: "string" } },
        required: ["user-id"],
      }),
      tool("from", { type: "object", properties: { class: { type: "integer" } }, required: ["class"] }),
      tool("2fa", { type: "object", properties: {} }),
      tool("get_user", { type: "object", properties: {} }),
    ];
    const names = buildStubs(tools).map((stub) => stub.functionName);
    expect(names).toEqual(["get_user", "from_", "tool_2fa", "get_user_2"]);
    const output = callInPython(
      tools,
      "print(json.dumps([get_user(user_id='u1'), from_(class_=3), tool_2fa(), get_user_2()]))",
    );
    expect(JSON.parse(output)).toEqual([
      { tool: "get-user", args: { "user-id": "u1" } },
      { tool: "from", args: { class: 3 } },
      { tool: "2fa", args: {} },
      { tool: "get_user", args: {} },
    ]);
  });

  it("leaves optional arguments out when they are not given, and sends schema defaults", () => {
    const tools = [
      tool("search", {
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for." },
          limit: { type: "integer", default: 10 },
          region: { type: "string" },
          tags: { type: "array", items: { type: "string" }, default: ["a"] },
        },
        required: ["query"],
      }),
    ];
    const [stub] = buildStubs(tools);
    expect(stub?.signature).toContain(
      "def search(*, query: str, limit: int = 10, region: str | None = None, tags: list[str] | None = None) -> Any:",
    );
    expect(JSON.parse(callInPython(tools, "print(json.dumps(search(query='x')))"))).toEqual({
      tool: "search",
      args: { query: "x", limit: 10 },
    });
    expect(
      JSON.parse(callInPython(tools, "print(json.dumps(search(query='x', region='EMEA', limit=2)))")),
    ).toEqual({ tool: "search", args: { query: "x", limit: 2, region: "EMEA" } });
  });

  it("makes arguments keyword-only, so a positional call fails in Python", () => {
    const tools = [
      tool("echo", { type: "object", properties: { text: { type: "string" } }, required: ["text"] }),
    ];
    expect(() => callInPython(tools, "echo('x')")).toThrow(/positional/);
  });

  it("types enums as Literal, nested objects and arrays, and nullable unions", () => {
    expect(pythonType({ type: "string", enum: ["asc", "desc"] })).toBe('Literal["asc", "desc"]');
    expect(
      pythonType({ type: "array", items: { type: "object", properties: { a: { type: "number" } } } }),
    ).toBe("list[dict[str, Any]]");
    expect(pythonType({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe("str | None");
    expect(pythonType({ type: ["integer", "null"] })).toBe("int | None");
    expect(pythonType({ type: "object", additionalProperties: { type: "number" } })).toBe("dict[str, float]");
    expect(pythonType({ type: "boolean" })).toBe("bool");
    expect(pythonType({})).toBe("Any");
  });

  it("puts the full description, argument descriptions, nested fields and the output schema in the docstring", () => {
    const tools = [
      tool(
        "create_order",
        {
          type: "object",
          properties: {
            customer: {
              type: "object",
              description: "Who orders.",
              properties: { name: { type: "string", description: "Full name." }, vip: { type: "boolean" } },
              required: ["name"],
            },
            sort: { type: "string", enum: ["asc", "desc"], description: "Sort order." },
          },
          required: ["customer"],
        },
        {
          description: 'Creates an order.\n\nSecond paragraph with a """quote""" and a \\ backslash.',
          outputSchema: {
            type: "object",
            description: "The stored order.",
            properties: { id: { type: "string" }, total: { type: "number" } },
          },
        },
      ),
    ];
    const signatures = renderStubSignatures(tools);
    expect(signatures).toContain(
      'def create_order(*, customer: dict[str, Any], sort: Literal["asc", "desc"] | None = None) -> dict[str, Any]:',
    );
    expect(signatures).toContain("Second paragraph with a");
    expect(signatures).toContain("customer: Who orders.");
    expect(signatures).toContain("name (str): Full name.");
    expect(signatures).toContain("vip (bool, optional)");
    expect(signatures).toContain("sort: Sort order.");
    expect(signatures).toContain("Returns:");
    expect(signatures).toContain("dict[str, Any]: The stored order.");
    expect(signatures).toContain("total (float, optional)");
    expect(signatures).not.toContain("_call");
    // The docstring with quotes and a backslash still compiles, and help() shows the text.
    const output = callInPython(tools, "print(create_order.__doc__)");
    expect(output).toContain('Second paragraph with a """quote""" and a \\ backslash.');
  });

  it("renders unions of objects as one TypedDict per variant, valid Python that the call sends as dicts", () => {
    const circle = {
      type: "object",
      description: "A circle.",
      properties: {
        kind: { type: "string", const: "circle" },
        r: { type: "number", exclusiveMinimum: 0, description: "Radius in cm" },
        style: {
          type: "object",
          properties: { color: { type: "string" }, width: { type: "integer", minimum: 1 } },
          required: ["color"],
        },
      },
      required: ["kind", "r"],
    };
    const rect = {
      type: "object",
      properties: {
        kind: { type: "string", const: "rect" },
        w: { type: "number" },
        "corner-radius": { type: "number", default: 0 },
      },
      required: ["kind", "w"],
    };
    const tools = [
      tool("draw", {
        type: "object",
        properties: {
          shape: { oneOf: [circle, rect], description: "What to draw" },
          layers: {
            type: "array",
            items: {
              anyOf: [{ type: "object", properties: { text: { type: "string" } } }, { type: "null" }],
            },
          },
          filter: {
            type: "object",
            properties: {
              op: {
                anyOf: [
                  { type: "object", properties: { eq: { type: "string" } }, required: ["eq"] },
                  { type: "object", properties: { in: { type: "array", items: { type: "string" } } } },
                ],
              },
            },
          },
        },
        required: ["shape"],
      }),
    ];
    const [stub] = buildStubs(tools);
    expect(stub?.typeNames).toEqual([
      "DrawShapeCircleStyle",
      "DrawShapeCircle",
      "DrawShapeRect",
      "DrawLayersVariant1",
      "DrawFilterOpVariant1",
      "DrawFilterOpVariant2",
    ]);
    const signature = stub?.signature ?? "";
    expect(signature).toContain(
      [
        "class DrawShapeCircle(TypedDict):",
        "    # A circle.",
        '    kind: Literal["circle"]',
        "    r: float  # Radius in cm. Constraints: > 0.",
        "    style: NotRequired[DrawShapeCircleStyle]",
      ].join("\n"),
    );
    expect(signature).toContain(
      [
        'DrawShapeRect = TypedDict("DrawShapeRect", {',
        '    "kind": Literal["rect"],',
        '    "w": float,',
        '    "corner-radius": NotRequired[float],  # Defaults to 0.',
        "})",
      ].join("\n"),
    );
    expect(signature).toContain(
      "def draw(*, shape: DrawShapeCircle | DrawShapeRect, layers: list[DrawLayersVariant1 | None] | None = None, filter: dict[str, Any] | None = None) -> Any:",
    );
    expect(signature).toContain(
      'shape: What to draw. A dict shaped as one of: DrawShapeCircle, DrawShapeRect (told apart by "kind"). Required.',
    );
    expect(signature).toContain("op (DrawFilterOpVariant1 | DrawFilterOpVariant2, optional)");
    expect(signature).toContain("layers: Each item a dict shaped as DrawLayersVariant1 (or None).");
    expect(signature).not.toContain("One of");
    const output = callInPython(
      tools,
      [
        "import typing",
        "keys = {name: sorted(globals()[name].__required_keys__) for name in ['DrawShapeCircle', 'DrawShapeRect']}",
        "sent = draw(shape=DrawShapeCircle(kind='circle', r=2.0), filter={'op': DrawFilterOpVariant2(**{'in': ['a']})})",
        "print(json.dumps([keys, typing.get_type_hints(draw)['shape'] == (DrawShapeCircle | DrawShapeRect), sent]))",
      ].join("\n"),
    );
    expect(JSON.parse(output)).toEqual([
      { DrawShapeCircle: ["kind", "r"], DrawShapeRect: ["kind", "w"] },
      true,
      { tool: "draw", args: { shape: { kind: "circle", r: 2 }, filter: { op: { in: ["a"] } } } },
    ]);
  });

  it("does not let a tool shadow print or the bridge's exceptions", () => {
    const tools = [tool("print", { type: "object", properties: {} }), tool("ToolError", { type: "object" })];
    expect(buildStubs(tools).map((stub) => stub.functionName)).toEqual(["print_", "ToolError_"]);
    expect(callInPython(tools, "print('still', print_()['tool'], issubclass(ToolError, Exception))")).toBe(
      "still print True",
    );
  });

  it("exports the stubs, their TypedDicts and the exceptions through import *", () => {
    const tools = [
      tool("load-orders", { type: "object", properties: {} }),
      tool("pay", {
        type: "object",
        properties: {
          by: { anyOf: [{ type: "object", properties: { card: { type: "string" } } }, { type: "string" }] },
        },
      }),
    ];
    expect(renderStubsModule(tools)).toContain(
      '__all__ = ["ToolError", "ToolDenied", "ToolCallLimitExceeded", "load_orders", "PayByVariant1", "pay"]',
    );
  });
});

describe("$ref, $defs and allOf as pydantic writes them (issue 43 #11)", () => {
  // A pydantic v2 model's JSON schema (model_json_schema()): definitions under $defs, a field's
  // default beside its $ref, a list of models, a self-referencing model, and an allOf of two parts.
  const schema = {
    $defs: {
      Address: {
        type: "object",
        title: "Address",
        properties: {
          street: { type: "string", description: "Street and number" },
          city: { type: "string" },
        },
        required: ["street", "city"],
      },
      Kind: { enum: ["home", "work"], type: "string", title: "Kind" },
      Node: {
        type: "object",
        title: "Node",
        properties: {
          name: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/Node" } },
        },
      },
    },
    type: "object",
    properties: {
      customer: {
        type: "object",
        properties: { address: { $ref: "#/$defs/Address" }, kind: { $ref: "#/$defs/Kind", default: "home" } },
        required: ["address"],
      },
      kind: { $ref: "#/$defs/Kind", default: "home" },
      addresses: { type: "array", items: { $ref: "#/$defs/Address" } },
      tree: { $ref: "#/$defs/Node" },
      contact: {
        allOf: [
          { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
          { type: "object", properties: { phone: { type: "string" } } },
        ],
      },
    },
    required: ["customer"],
  };
  const [stub] = buildStubs([
    {
      name: "save_customer",
      description: "Save a customer.",
      origin: "tool",
      inputSchema: schema as never,
      invoke: async () => null,
    },
  ]);
  const signature = stub?.signature ?? "";

  it("resolves every reference into the types and the documented fields", () => {
    expect(signature).toContain('kind: Literal["home", "work"] = "home"');
    expect(signature).toContain("addresses: list[dict[str, Any]] | None = None");
    expect(signature).toContain("tree: dict[str, Any] | None = None");
    expect(signature).toContain("street (str): Street and number.");
    expect(signature).toContain('kind (Literal["home", "work"], optional): Defaults to "home".');
    // A model that refers to itself stops at the first repeat.
    expect(signature).toContain("children (list[Any], optional)");
  });

  it("merges an allOf of several objects, their required keys kept", () => {
    expect(signature).toContain("contact: dict[str, Any] | None = None");
    expect(signature).toContain("email (str)\n");
    expect(signature).toContain("phone (str, optional)");
  });
});
