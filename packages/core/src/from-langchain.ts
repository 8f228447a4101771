import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { interopSafeParseAsync, isInteropZodSchema } from "@langchain/core/utils/types";
import { z } from "zod";
import { ConfigError } from "./errors/config-error.ts";
import { ToolInputError } from "./errors/tool-input-error.ts";
import type { JsonSchema, ToolSpec } from "./tool-spec.ts";

/**
 * A LangChain tool (zod or JSON schema) as a ToolSpec. `invoke` validates the arguments with the
 * tool's own zod schema first, so a bad call fails with the schema's message, and returns what the
 * tool returns (a ToolMessage's or a content array's text when the tool returns those).
 */
export function fromLangChainTool(tool: StructuredToolInterface, origin = "tool"): ToolSpec {
  const schema = tool.schema as unknown;
  const inputSchema = inputSchemaOf(tool.name, schema);
  return {
    name: tool.name,
    description: tool.description ?? "",
    inputSchema: stripSchemaNoise(inputSchema),
    origin,
    tracesItself: true,
    async invoke(args, context) {
      let validated: unknown = args;
      if (isInteropZodSchema(schema)) {
        const parsed = await interopSafeParseAsync(schema, args);
        if (!parsed.success)
          throw new ToolInputError({
            tool: tool.name,
            issues: formatIssues(parsed.error),
            cause: parsed.error,
          });
        validated = parsed.data;
      }
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
 * The tool's input as a JSON schema. io "input": a field with a default is optional for the caller
 * (zod's output view makes it required). Dates and bigints have no JSON form a program could send
 * and zod would accept, so they are refused here, naming the tool and the field and the fix.
 */
function inputSchemaOf(toolName: string, schema: unknown): JsonSchema {
  try {
    return toJsonSchema(schema as Parameters<typeof toJsonSchema>[0], { io: "input" }) as JsonSchema;
  } catch (error) {
    const fields = isInteropZodSchema(schema) ? unrepresentableFields(schema) : [];
    const named = fields
      .map(({ field, type }) =>
        type === "date"
          ? `'${field}' is a z.date() (use z.iso.datetime() or z.iso.date(): an ISO string, and convert it in the tool)`
          : `'${field}' is a z.bigint() (use z.number().int(), or z.string() of digits for numbers past 2^53)`,
      )
      .join("; ");
    throw new ConfigError({
      message: `The tool '${toolName}' has an argument a program cannot send: ${named || (error as Error).message}. Change its schema.`,
      cause: error,
    });
  }
}

/** The fields (dotted paths, `[]` for array items) whose zod type is a date or a bigint. */
function unrepresentableFields(schema: unknown): { field: string; type: string }[] {
  const found: { field: string; type: string }[] = [];
  try {
    z.toJSONSchema(schema as z.ZodType, {
      io: "input",
      unrepresentable: "any",
      override: (context) => {
        const type = (context.zodSchema as { _zod?: { def?: { type?: string } } })._zod?.def?.type;
        if (type !== "date" && type !== "bigint") return;
        const path = (context as { path?: (string | number)[] }).path ?? [];
        const field = path
          .map((part, index) =>
            path[index - 1] === "properties" ? String(part) : part === "items" ? "[]" : "",
          )
          .filter(Boolean)
          .join(".")
          .replace(/\.\[\]/g, "[]");
        found.push({ field, type });
      },
    });
  } catch {
    // a zod 3 schema, or one this walk cannot read: the caller names the tool without the field
  }
  return found;
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
