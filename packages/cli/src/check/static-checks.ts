import type { JsonSchema, ToolSpec } from "@codeaction/core";
import type { StubbedTool } from "@codeaction/core/stubs";

export type Severity = "error" | "warning" | "note";

/** One thing `codeaction check` found about a tool, with what to do about it. */
export type Finding = { check: string; severity: Severity; message: string; fix?: string };

/** What a program sees of a tool, checked without calling it: types, name, output schema, descriptions. */
export function staticFindings(tool: ToolSpec, stub: StubbedTool): Finding[] {
  return [
    ...typeFindings(tool),
    ...nameFindings(stub),
    ...outputFindings(tool),
    ...descriptionFindings(tool),
  ];
}

function typeFindings(tool: ToolSpec): Finding[] {
  const untyped = Object.entries(tool.inputSchema.properties ?? {}).flatMap(([name, schema]) =>
    untypedPlaces(schema, name),
  );
  if (untyped.length === 0) return [];
  return [
    {
      check: "types",
      severity: "warning",
      message: `the stub says Any for ${untyped.join(", ")}: the schema does not say what goes there`,
      fix: "give each argument, array item and object value a JSON Schema type (or properties)",
    },
  ];
}

/** Where in a schema nothing says what goes: `tags[]` (items), `options{}` (object values), `label`. */
function untypedPlaces(schema: JsonSchema | undefined, path: string, depth = 0): string[] {
  if (!schema || typeof schema !== "object") return [path];
  if (depth > 6 || schema.const !== undefined || Array.isArray(schema.enum)) return [];
  const union = schema.anyOf ?? schema.oneOf ?? schema.allOf;
  if (Array.isArray(union)) return union.flatMap((member) => untypedPlaces(member, path, depth + 1));
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const places: string[] = [];
  if (schema.properties) {
    for (const [name, property] of Object.entries(schema.properties)) {
      places.push(...untypedPlaces(property, `${path}.${name}`, depth + 1));
    }
  } else if (types.includes("object")) {
    const values = schema.additionalProperties;
    places.push(
      ...(typeof values === "object" ? untypedPlaces(values, `${path}{}`, depth + 1) : [`${path}{}`]),
    );
  }
  if (types.includes("array")) {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    places.push(...untypedPlaces(items, `${path}[]`, depth + 1));
  }
  if (types.length === 0 && !schema.properties) places.push(path);
  return places;
}

function nameFindings(stub: StubbedTool): Finding[] {
  if (stub.functionName === stub.toolName) return [];
  const suffix = /_(\d+)$/.exec(stub.functionName)?.[0];
  if (suffix !== undefined && !stub.toolName.endsWith(suffix)) {
    return [
      {
        check: "name",
        severity: "warning",
        message: `programs call it ${stub.functionName}: its Python name clashes with another tool's`,
        fix: "give tools names that stay distinct with - and . replaced by _",
      },
    ];
  }
  // A name with - or . in it simply reads with _ (the table shows it); a keyword or builtin gets a _ added.
  if (!stub.functionName.endsWith("_") || stub.toolName.endsWith("_")) return [];
  return [
    {
      check: "name",
      severity: "note",
      message: `programs call it ${stub.functionName}: ${stub.toolName} is a Python keyword or builtin name`,
    },
  ];
}

function outputFindings(tool: ToolSpec): Finding[] {
  if (tool.outputSchema) return [];
  return [
    {
      check: "outputSchema",
      severity: "warning",
      message:
        "no outputSchema: a program cannot know what comes back, so it has to guess or print and retry",
      fix: "declare an outputSchema and return structuredContent that matches it",
    },
  ];
}

function descriptionFindings(tool: ToolSpec): Finding[] {
  const findings: Finding[] = [];
  if (tool.description.trim() === "") {
    findings.push({
      check: "descriptions",
      severity: "warning",
      message: "the tool has no description: its docstring is empty",
      fix: "describe what the tool does and when to use it",
    });
  }
  const bare = Object.entries(tool.inputSchema.properties ?? {})
    .filter(([, schema]) => typeof schema.description !== "string" || schema.description.trim() === "")
    .map(([name]) => name);
  if (bare.length > 0) {
    findings.push({
      check: "descriptions",
      severity: "warning",
      message: `argument${bare.length === 1 ? "" : "s"} without a description: ${bare.join(", ")}`,
      fix: "add a description to each argument's schema",
    });
  }
  return findings;
}
