import type { JsonSchema, ToolSpec } from "../tools/tool-spec.ts";

/** The function-calling shape `bindTools` accepts from every provider (OpenAI's format). */
export type FunctionToolDefinition = {
  type: "function";
  function: { name: string; description: string; parameters: JsonSchema };
};

export type ToolCatalog = {
  definitions: FunctionToolDefinition[];
  /** Model-facing name -> the tool. */
  byModelName: Map<string, ToolSpec>;
};

// Providers accept ^[a-zA-Z0-9_-]{1,64}$ for function names (OpenAI, Anthropic, Gemini).
const validName = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Describes the tools to the model from their JSON schemas. A tool whose name providers
 * refuse (an MCP tool named `files.read`) gets a safe model-facing name (`files_read`);
 * records, events and traces keep the tool's own name.
 */
export function createToolCatalog(tools: ToolSpec[]): ToolCatalog {
  const byModelName = new Map<string, ToolSpec>();
  const definitions: FunctionToolDefinition[] = [];
  for (const tool of tools) {
    const modelName = uniqueName(toModelName(tool.name), byModelName);
    byModelName.set(modelName, tool);
    definitions.push({
      type: "function",
      function: {
        name: modelName,
        description: tool.description,
        parameters: objectSchema(tool.inputSchema),
      },
    });
  }
  return { definitions, byModelName };
}

function toModelName(name: string): string {
  if (validName.test(name)) return name;
  const replaced = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  return replaced.length > 0 ? replaced : "tool";
}

function uniqueName(name: string, taken: Map<string, ToolSpec>): string {
  if (!taken.has(name)) return name;
  for (let suffix = 2; ; suffix++) {
    const candidate = `${name.slice(0, 60)}_${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Function parameters must be an object schema; a tool without arguments gets an empty one. */
function objectSchema(schema: JsonSchema | undefined): JsonSchema {
  if (schema === undefined || Object.keys(schema).length === 0) return { type: "object", properties: {} };
  if (schema.type === undefined && schema.properties !== undefined) return { type: "object", ...schema };
  return schema;
}
