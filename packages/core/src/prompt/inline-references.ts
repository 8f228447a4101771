import type { JsonSchema } from "../tools/tool-spec.ts";
import { resolveReference } from "../tools/unknown-keys.ts";

/**
 * A tool's schema as the stubs read it: every local `$ref` replaced by what it points at (each
 * definition inlined once and shared, so one `$defs` entry makes one TypedDict; a reference back
 * into itself, or one that cannot be resolved, becomes `{}`, Any), and an `allOf` of several
 * object parts merged into one object (their properties and required keys together). Pydantic,
 * and so most Python MCP servers, write their models this way.
 */
export function inlineReferences(root: JsonSchema): JsonSchema {
  const resolved = new Map<string, JsonSchema>();
  const resolving = new Set<string>();
  const visit = (node: JsonSchema, depth: number): JsonSchema => {
    if (typeof node !== "object" || node === null || Array.isArray(node) || depth > maxDepth) return {};
    if (typeof node.$ref === "string") return withAnnotations(reference(node.$ref, depth), node);
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "$defs" || key === "definitions") continue;
      copy[key] = visitKeyword(key, value, depth);
    }
    return mergeAllOf(copy as JsonSchema);
  };
  const visitKeyword = (key: string, value: unknown, depth: number): unknown => {
    if (valueKeywords.has(key) || typeof value !== "object" || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => visit(item as JsonSchema, depth + 1));
    if (mapKeywords.has(key)) {
      return Object.fromEntries(
        Object.entries(value).map(([name, item]) => [name, visit(item as JsonSchema, depth + 1)]),
      );
    }
    return visit(value as JsonSchema, depth + 1);
  };
  const reference = (pointer: string, depth: number): JsonSchema => {
    const known = resolved.get(pointer);
    if (known) return known;
    const target = resolveReference(root, pointer);
    if (!target || resolving.has(pointer)) return {};
    resolving.add(pointer);
    const inlined = visit(target, depth + 1);
    resolving.delete(pointer);
    resolved.set(pointer, inlined);
    return inlined;
  };
  return visit(root, 0);
}

const maxDepth = 64;
/** Keywords whose value is data, not a schema. */
const valueKeywords = new Set(["const", "enum", "default", "examples", "required", "type", "$ref"]);
/** Keywords whose value maps names to schemas. */
const mapKeywords = new Set(["properties", "patternProperties", "dependentSchemas"]);

/** The target with the referring node's own keywords (a description, a default) laid over it. */
function withAnnotations(target: JsonSchema, node: JsonSchema): JsonSchema {
  const { $ref: _reference, ...annotations } = node;
  return Object.keys(annotations).length === 0 ? target : { ...target, ...annotations };
}

/** An allOf of several object parts as one object; anything else as it is. */
function mergeAllOf(schema: JsonSchema): JsonSchema {
  const parts = schema.allOf;
  if (!Array.isArray(parts) || parts.length < 2) return schema;
  if (!parts.every((part) => part.properties !== undefined || part.type === "object")) return schema;
  const { allOf: _parts, ...rest } = schema;
  const required = [
    ...new Set([...(schema.required ?? []), ...parts.flatMap((part) => part.required ?? [])]),
  ];
  return {
    ...rest,
    type: "object",
    properties: Object.assign({}, schema.properties, ...parts.map((part) => part.properties)),
    ...(required.length > 0 ? { required } : {}),
  };
}
