import { type JsonSchema, McpToolError, type ToolSpec } from "@codeaction/core";
import { previewJson } from "../program/describe-tool-call.ts";
import type { Finding } from "./static-checks.ts";

/** A tool call `check --call` made, as reported. */
export type CheckedCall = {
  kind: "example" | "bad-arguments";
  arguments: Record<string, unknown>;
  outcome: "ok" | "error-result" | "protocol-error" | "failed";
  /** The start of what came back, or the ToolError message a program would see. */
  preview: string;
};

const callTimeoutMs = 30_000;

/**
 * Example arguments from the schema: its `examples` (the first object), else, for every required
 * argument, its own `examples`, `const`, `default` or first `enum` value. Undefined when the schema
 * does not give them all, or when nothing is required (a tool is not called on a guess).
 */
export function exampleArguments(schema: JsonSchema): Record<string, unknown> | undefined {
  const examples = schema.examples;
  if (Array.isArray(examples) && isObject(examples[0])) return examples[0];
  const required = schema.required ?? [];
  if (required.length === 0) return undefined;
  const args: Record<string, unknown> = {};
  for (const name of required) {
    const property = schema.properties?.[name];
    const value = property ? exampleValue(property) : undefined;
    if (value === undefined) return undefined;
    args[name] = value;
  }
  return args;
}

function exampleValue(schema: JsonSchema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  return undefined;
}

/** Calls the tool with `args` and checks what a program would get: structuredContent matching the outputSchema. */
export async function checkExampleCall(
  tool: ToolSpec,
  args: Record<string, unknown>,
): Promise<{ call: CheckedCall; findings: Finding[] }> {
  try {
    const value = await invoke(tool, args);
    return {
      call: { kind: "example", arguments: args, outcome: "ok", preview: previewJson(value) },
      findings: [],
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const call: CheckedCall = {
      kind: "example",
      arguments: args,
      outcome: outcomeOf(error),
      preview: message,
    };
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
    if (/output schema/.test(cause)) {
      return {
        call,
        findings: [
          {
            check: "structuredContent",
            severity: "error",
            message: cause.replace(/^MCP error -?\d+: /, ""),
            fix: "return structuredContent that validates against the declared outputSchema",
          },
        ],
      };
    }
    return {
      call,
      findings: [{ check: "call", severity: "error", message: `the example call failed: ${message}` }],
    };
  }
}

/** Calls the tool with a wrongly typed argument: the program should get a ToolError that says what was wrong. */
export async function checkErrorCall(tool: ToolSpec): Promise<{ call?: CheckedCall; findings: Finding[] }> {
  const args = badArguments(tool.inputSchema);
  if (args === undefined) return { findings: [] };
  const accepted: Finding = {
    check: "errors",
    severity: "warning",
    message: `a wrongly typed argument was accepted (${previewJson(args)})`,
    fix: "validate arguments against the inputSchema and answer with isError: true",
  };
  try {
    const value = await invoke(tool, args);
    return {
      call: { kind: "bad-arguments", arguments: args, outcome: "ok", preview: previewJson(value) },
      findings: [accepted],
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const call: CheckedCall = {
      kind: "bad-arguments",
      arguments: args,
      outcome: outcomeOf(error),
      preview: message,
    };
    const findings: Finding[] = [];
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : "";
    // The tool ran and answered (its structured content was then refused): the arguments got through.
    if (/output schema/.test(cause)) {
      findings.push(accepted);
    } else if (call.outcome === "protocol-error") {
      findings.push({
        check: "errors",
        severity: "warning",
        message: `bad arguments get a JSON-RPC error, not an isError result; programs see ToolError("${message.slice(0, 120)}")`,
        fix: "report input and execution failures as a result with isError: true and a message saying what to change",
      });
    } else if (message.trim() === "" || /without a message/.test(message)) {
      findings.push({
        check: "errors",
        severity: "warning",
        message: "the error result has no text: programs see an empty ToolError",
        fix: "put what went wrong and what to change in the error result's text",
      });
    }
    return { call, findings };
  }
}

/** The first required (else first) typed argument, given a value of another type. */
function badArguments(schema: JsonSchema): Record<string, unknown> | undefined {
  const properties = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const target = properties.find(([name]) => required.has(name)) ?? properties[0];
  if (!target) return undefined;
  const [name, property] = target;
  const type = Array.isArray(property.type) ? property.type[0] : property.type;
  if (type === undefined) return undefined;
  return { ...(exampleArguments(schema) ?? {}), [name]: type === "string" ? 12345 : "not-a-valid-value" };
}

async function invoke(tool: ToolSpec, args: Record<string, unknown>): Promise<unknown> {
  return tool.invoke(args, { runId: "check", signal: AbortSignal.timeout(callTimeoutMs) });
}

function outcomeOf(error: unknown): CheckedCall["outcome"] {
  if (!McpToolError.isInstance(error)) return "failed";
  return error.isErrorResult ? "error-result" : "protocol-error";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
