import type { CallbackManager } from "@langchain/core/callbacks/manager";

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
  /**
   * Checks `args` against the tool's own schema without running it, throwing what `invoke` would
   * (a ToolInputError). Called before an approval hook, so nobody is asked to approve a call that
   * could never run; a tool without it is checked by `invoke` alone.
   */
  validate?(args: Record<string, unknown>): Promise<void>;
  /**
   * True when `invoke` reports its own LangChain tool run to `context.callbacks` (a LangChain
   * tool does); otherwise the agent reports one around it.
   */
  tracesItself?: boolean;
};

/** What a tool call gets besides its arguments: the run id and an abort signal. */
export type ToolCallContext = {
  runId: string;
  /** Aborts when the turn is cancelled or the program ends. */
  signal?: AbortSignal;
  /** The call's id (the bridge's or the model's). */
  callId?: string;
  /** LangChain callbacks of the run this call belongs to (tracing, nested agents). */
  callbacks?: CallbackManager;
  /** The call's OpenTelemetry span, when the run is traced: the tool's own requests start children under it. */
  trace?: {
    child<T>(
      name: string,
      attributes: Record<string, string | number | boolean>,
      work: () => Promise<T>,
    ): Promise<T>;
  };
};

/** Why the tool's own schema refuses `args` (its `validate`'s message), or undefined when it takes them. */
export async function invalidArguments(
  spec: ToolSpec,
  args: Record<string, unknown>,
): Promise<string | undefined> {
  if (!spec.validate) return undefined;
  try {
    await spec.validate(args);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A tool call's duration as recorded: milliseconds to 0.01 ms (11.71, not 11.712931000000026). */
export function roundedMilliseconds(milliseconds: number): number {
  return Math.round(milliseconds * 100) / 100;
}
