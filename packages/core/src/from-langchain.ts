import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { interopSafeParseAsync, isInteropZodSchema } from "@langchain/core/utils/types";
import { ToolInputError } from "./errors/tool-input-error.ts";
import type { JsonSchema, ToolSpec } from "./tool-spec.ts";

/**
 * A LangChain tool (zod or JSON schema) as a ToolSpec. `invoke` validates the arguments with the
 * tool's own zod schema first, so a bad call fails with the schema's message, and returns what the
 * tool returns (a ToolMessage's or a content array's text when the tool returns those).
 */
export function fromLangChainTool(tool: StructuredToolInterface, origin = "tool"): ToolSpec {
  const schema = tool.schema as unknown;
  // io "input": a field with a default is optional for the caller (zod's output view makes it required).
  const inputSchema = toJsonSchema(schema as Parameters<typeof toJsonSchema>[0], {
    io: "input",
  }) as JsonSchema;
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
