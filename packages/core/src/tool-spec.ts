/** The subset of JSON Schema that stubs, argument checks and the tools pattern read. */
export type JsonSchema = {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema | JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  [key: string]: unknown;
};

/**
 * The one shape every callable tool takes inside core, whatever its origin
 * (a LangChain tool, an MCP tool, a CSV loader). Stubs, the bridge and the
 * tool loop only see ToolSpecs.
 */
export type ToolSpec = {
  /** The tool's own name, as its origin spells it (may not be a Python identifier). */
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  inputSchema: JsonSchema;
  /** JSON schema of what comes back, when the origin declares one (MCP outputSchema). */
  outputSchema?: JsonSchema;
  /** Where the tool comes from, for messages and logs: "tool", "mcp:<server>", "csv". */
  origin: string;
  /**
   * Validates `args` against the tool's own schema and runs it. Returns a JSON-compatible
   * value (anything else is turned into its string form by the caller). Throws on failure;
   * the error message is what the program or the model sees.
   */
  invoke(args: Record<string, unknown>, context: ToolCallContext): Promise<unknown>;
};

export type ToolCallContext = {
  runId: string;
  signal?: AbortSignal;
};
