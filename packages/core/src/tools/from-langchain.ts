import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { interopSafeParseAsync, isInteropZodSchema, isZodSchemaV4 } from "@langchain/core/utils/types";
import { z } from "zod";
import { ConfigError } from "../errors/config-error.ts";
import { ToolInputError } from "../errors/tool-input-error.ts";
import { hasValueMarkers, reviveInputValues, valueMarker, withoutValueMarkers } from "./tool-input-values.ts";
import type { JsonSchema, ToolSpec } from "./tool-spec.ts";

/**
 * A LangChain tool (zod or JSON schema) as a ToolSpec. `invoke` turns ISO strings and digits back
 * into the Dates and bigints the schema wants (tool-input-values.ts), then validates the arguments
 * with the tool's own zod schema, so a bad call fails with the schema's message, and returns what the
 * tool returns (a ToolMessage's or a content array's text when the tool returns those).
 */
export function fromLangChainTool(tool: StructuredToolInterface, origin = "tool"): ToolSpec {
  const schema = tool.schema as unknown;
  const markedSchema = stripSchemaNoise(inputSchemaOf(tool.name, schema));
  const revives = hasValueMarkers(markedSchema);
  const outputSchema = outputSchemaOf(tool);
  /** The arguments as the tool takes them (dates and bigints revived, the zod schema applied), or a ToolInputError. */
  const checkArguments = async (args: Record<string, unknown>): Promise<unknown> => {
    const revived: unknown = revives ? reviveInputValues(tool.name, markedSchema, args) : args;
    if (!isInteropZodSchema(schema)) return revived;
    const parsed = await interopSafeParseAsync(schema, revived);
    if (!parsed.success)
      throw new ToolInputError({ tool: tool.name, issues: formatIssues(parsed.error), cause: parsed.error });
    return parsed.data;
  };
  return {
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: revives ? withoutValueMarkers(markedSchema) : markedSchema,
    ...(outputSchema ? { outputSchema } : {}),
    origin,
    tracesItself: true,
    async validate(args) {
      await checkArguments(args);
    },
    async invoke(args, context) {
      const validated = await checkArguments(args);
      const output: unknown = await tool.invoke(validated as never, {
        signal: context.signal,
        metadata: { runId: context.runId },
        ...(context.callbacks ? { callbacks: context.callbacks } : {}),
      });
      return unwrap(output);
    },
  };
}

/**
 * The tool's input as a JSON schema, with dates and bigints marked for `reviveInputValues`.
 * io "input": a field with a default is optional for the caller (zod's output view makes it
 * required). A zod 4 schema is converted by zod itself, so `z.looseObject` and `.passthrough()`
 * keep `additionalProperties` (their extra keys are allowed) and plain objects stay closed. Types
 * a program cannot send (a Map, a Set, a symbol, a function, z.custom) are refused here, naming
 * the tool, each field and the fix.
 */
function inputSchemaOf(toolName: string, schema: unknown): JsonSchema {
  if (!isZodSchemaV4(schema)) {
    try {
      return toJsonSchema(schema as Parameters<typeof toJsonSchema>[0], { io: "input" }) as JsonSchema;
    } catch (error) {
      throw new ConfigError({
        message: `The tool '${toolName}' has an argument a program cannot send: ${(error as Error).message}. Change its schema.`,
        cause: error,
      });
    }
  }
  const refused: string[] = [];
  const converted = z.toJSONSchema(schema as z.ZodType, {
    io: "input",
    unrepresentable: "any",
    override: (context) => {
      const type = (context.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type ?? "";
      const json = context.jsonSchema as JsonSchema;
      if (type === "date")
        Object.assign(json, { type: "string", format: "date-time", [valueMarker]: "date" });
      else if (type === "bigint") Object.assign(json, { type: "integer", [valueMarker]: "bigint" });
      else if (unsendableTypes.has(type)) refused.push(`'${fieldPath(context)}' is a z.${type}()`);
    },
  });
  if (refused.length > 0)
    throw new ConfigError({
      message:
        `The tool '${toolName}' has an argument a program cannot send: ${refused.join("; ")}. ` +
        "Change its schema to JSON types (objects, arrays, strings, numbers, booleans; dates and bigints work too).",
    });
  return converted as JsonSchema;
}

/** zod types with no JSON form a program could send. */
const unsendableTypes = new Set(["map", "set", "symbol", "function", "custom", "promise", "nan", "void"]);

/** The field a schema node describes, as a dotted path (`[]` for array items). */
function fieldPath(context: unknown): string {
  const path = (context as { path?: (string | number)[] }).path ?? [];
  const field = path
    .map((part, index) => (path[index - 1] === "properties" ? String(part) : part === "items" ? "[]" : ""))
    .filter(Boolean)
    .join(".")
    .replace(/\.\[\]/g, "[]");
  return field || "the argument";
}

/**
 * What the tool says it returns: `metadata.outputSchema`, a zod schema or a JSON schema (LangChain
 * has no field of its own for it). The stub's return type and its `Returns:` section come from it.
 */
function outputSchemaOf(tool: StructuredToolInterface): JsonSchema | undefined {
  const declared = (tool as { metadata?: { outputSchema?: unknown } }).metadata?.outputSchema;
  if (declared === undefined || declared === null) return undefined;
  try {
    const converted = isZodSchemaV4(declared)
      ? z.toJSONSchema(declared as z.ZodType, {
          io: "output",
          unrepresentable: "any",
          // As the value mapping passes them on (tool-value.ts): a Date as its ISO string, a bigint as an int.
          override: (context) => {
            const type = (context.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type;
            if (type === "date") Object.assign(context.jsonSchema, { type: "string", format: "date-time" });
            if (type === "bigint") Object.assign(context.jsonSchema, { type: "integer" });
          },
        })
      : toJsonSchema(declared as Parameters<typeof toJsonSchema>[0]);
    if (typeof converted !== "object" || converted === null || Array.isArray(converted))
      throw new TypeError("not an object");
    return stripSchemaNoise(converted as JsonSchema);
  } catch (error) {
    throw new ConfigError({
      message: `The tool '${tool.name}' has a metadata.outputSchema that is neither a zod schema nor a JSON schema (${(error as Error).message}). Give one of those, or leave it out.`,
      cause: error,
    });
  }
}

function stripSchemaNoise(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, ...rest } = schema;
  return rest;
}

function formatIssues(error: unknown): string {
  const issues = (error as { issues?: { path?: PropertyKey[]; message?: string }[] }).issues;
  if (!Array.isArray(issues)) return error instanceof Error ? error.message : String(error);
  return issues
    .map((issue) => {
      const path = (issue.path ?? []).map(String).join(".");
      return path ? `${path}: ${issue.message}` : (issue.message ?? "invalid");
    })
    .join("; ");
}

/** Tools may return a ToolMessage or content blocks; the bridge wants the value itself. */
function unwrap(output: unknown): unknown {
  if (output && typeof output === "object" && "lc_direct_tool_output" in output && "content" in output) {
    return unwrap((output as { content: unknown }).content);
  }
  return output;
}
