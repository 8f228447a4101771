import type { JsonSchema, ToolSpec } from "../tools/tool-spec.ts";
import { inlineReferences } from "./inline-references.ts";
import {
  constraintsOf,
  defaultNote,
  discriminatorOf,
  isNullable,
  objectVariants,
  pascalCase,
  pythonKeywords,
  pythonLiteral,
  pythonType,
  sentence,
  type TypeContext,
  TypedDictScope,
} from "./python-types.ts";

/**
 * Python stubs made from tool schemas. Each tool becomes a real Python function with keyword-only,
 * typed arguments and a docstring; its body calls the bridge's `_call(<original name>, {args})`.
 * Names that are not Python identifiers are made into valid ones and mapped back here. Unions of
 * objects in the arguments become TypedDicts (python-types.ts), defined before the function.
 */

/** Names a tool function must not take: they would shadow what programs and the stubs rely on. */
const reservedFunctionNames = new Set([
  ...pythonKeywords,
  ...(
    "Any Literal ToolError ToolDenied ToolCallLimitExceeded print input open len list dict str int float " +
    "bool set tuple type range sum min max sorted round abs map filter zip enumerate object isinstance repr " +
    "format iter next any all id hash help vars exec eval compile globals locals super bytes Exception json decimal " +
    "datetime TypedDict NotRequired"
  ).split(" "),
]);

/** Names an argument must not take inside a stub (the body uses them). */
const reservedArgumentNames = new Set([...pythonKeywords, "_call", "_arguments"]);

/** A tool with the Python name its stub gets (for the CLI's checks and code-mode server). */
export type StubbedTool = {
  /** The tool's own name, passed to `_call` (may be `get-user`, `from`, ...). */
  toolName: string;
  /** The Python function name the program calls. */
  functionName: string;
  /** Original argument name -> Python parameter name. */
  argumentNames: Record<string, string>;
  /** The TypedDicts its arguments use (defined before it, exported with it). */
  typeNames: string[];
  /** Its TypedDicts, then `def ...:` and its docstring, without a body: what the model sees. */
  signature: string;
  /** The full Python definition: signature, docstring and the `_call` body. */
  source: string;
};

/** Makes `name` a valid Python identifier that is not a keyword or a reserved name. */
export function toPythonIdentifier(name: string, reserved: Set<string>): string {
  let identifier = name.normalize("NFKD").replace(/[^A-Za-z0-9_]/g, "_");
  if (identifier === "" || /^_+$/.test(identifier)) identifier = "tool";
  if (/^[0-9]/.test(identifier)) identifier = `tool_${identifier}`;
  if (reserved.has(identifier)) identifier = `${identifier}_`;
  return identifier;
}

function dedupe(identifier: string, taken: Set<string>): string {
  let candidate = identifier;
  for (let index = 2; taken.has(candidate); index += 1) candidate = `${identifier}_${index}`;
  taken.add(candidate);
  return candidate;
}

/**
 * Lines describing a schema's nested fields and union variants, for the docstring. With TypedDicts
 * (a stub's arguments), a union of objects is left to its TypedDicts; the answer (`Returns:`)
 * describes its variants here.
 */
function describeFields(
  schema: JsonSchema | undefined,
  indent: string,
  depth: number,
  context: TypeContext,
): string[] {
  if (!schema || depth > 4) return [];
  const target = schema.type === "array" && !Array.isArray(schema.items) ? schema.items : schema;
  if (!target) return [];
  const variants = objectVariants(target);
  if (variants && context.typedDicts) return [];
  if (variants) return describeVariants(variants, indent, depth, context);
  if (!target.properties) return [];
  const required = new Set(target.required ?? []);
  const lines: string[] = [];
  for (const [name, property] of Object.entries(target.properties)) {
    const fieldContext = { ...context, name: `${context.name ?? ""}${pascalCase(name)}` };
    const flags = [
      pythonType(property, fieldContext),
      required.has(name) ? undefined : "optional",
      ...constraintsOf(property),
    ]
      .filter(Boolean)
      .join(", ");
    const notes = [property.description ? sentence(property.description) : "", defaultNote(property)]
      .filter(Boolean)
      .join(" ");
    lines.push(`${indent}${name} (${flags})${notes ? `: ${notes}` : ""}`);
    lines.push(...describeFields(property, `${indent}    `, depth + 1, fieldContext));
  }
  return lines;
}

function describeVariants(
  variants: JsonSchema[],
  indent: string,
  depth: number,
  context: TypeContext,
): string[] {
  const discriminator = discriminatorOf(variants);
  const lines = [`${indent}One of${discriminator ? ` (told apart by "${discriminator}")` : ""}:`];
  variants.forEach((variant, index) => {
    const property = discriminator ? variant.properties?.[discriminator] : undefined;
    const value = property?.const ?? property?.enum?.[0];
    const label = discriminator ? `${discriminator}=${pythonLiteral(value)}` : `variant ${index + 1}`;
    const about = variant.description ? `: ${sentence(variant.description)}` : "";
    lines.push(`${indent}    ${label}${about}`);
    lines.push(...describeFields(variant, `${indent}        `, depth + 1, context));
  });
  return lines;
}

/** "A dict shaped as one of ...": the note for an argument whose union variants are TypedDicts. */
function variantsNote(schema: JsonSchema, scope: TypedDictScope): string {
  const target = schema.type === "array" && !Array.isArray(schema.items) ? schema.items : schema;
  const variants = target ? objectVariants(target) : undefined;
  const names = (variants ?? []).flatMap((variant) => scope.nameOf(variant) ?? []);
  if (!variants || names.length === 0) return "";
  const discriminator = discriminatorOf(variants);
  const apart = discriminator && names.length > 1 ? ` (told apart by "${discriminator}")` : "";
  const nonObjects = (target?.anyOf ?? target?.oneOf ?? []).filter((member) => !variants.includes(member));
  const others =
    nonObjects.length > 0 ? ` (or ${nonObjects.map((member) => pythonType(member)).join(" or ")})` : "";
  const shape = names.length > 1 ? `one of: ${names.join(", ")}${apart}${others}` : `${names[0]}${others}`;
  return `${target === schema ? "A dict" : "Each item a dict"} shaped as ${shape}.`;
}

/** Text made safe to sit inside a triple-quoted Python docstring. */
function docstringText(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"""/g, '\\"\\"\\"');
}

type Parameter = {
  originalName: string;
  pythonName: string;
  annotation: string;
  /** The default in the signature, or undefined when the argument is required. */
  defaultLiteral?: string;
  /** True when a None value means "leave it out" rather than "send null". */
  omitWhenNone: boolean;
  description?: string;
  schema: JsonSchema;
  required: boolean;
  /** How its type was made (the TypedDicts it uses live in `context.typedDicts`). */
  context: TypeContext;
};

function parametersOf(schema: JsonSchema, functionName: string, scope: TypedDictScope): Parameter[] {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const taken = new Set<string>();
  const parameters: Parameter[] = [];
  for (const [originalName, property] of Object.entries(properties)) {
    const pythonName = dedupe(toPythonIdentifier(originalName, reservedArgumentNames), taken);
    const isRequired = required.has(originalName);
    const context: TypeContext = {
      direction: "input",
      typedDicts: scope,
      name: `${pascalCase(functionName)}${pascalCase(originalName)}`,
    };
    let annotation = pythonType(property, context);
    let defaultLiteral: string | undefined;
    let omitWhenNone = false;
    if (!isRequired) {
      const scalarDefault =
        property.default !== undefined && (property.default === null || typeof property.default !== "object");
      if (scalarDefault) {
        defaultLiteral = pythonLiteral(property.default);
      } else {
        // Leaving it out lets the tool apply its own default (also for list and dict defaults).
        if (!isNullable(property)) annotation = `${annotation} | None`;
        defaultLiteral = "None";
        omitWhenNone = true;
      }
    }
    parameters.push({
      originalName,
      pythonName,
      annotation,
      defaultLiteral,
      omitWhenNone,
      description: property.description,
      schema: property,
      required: isRequired,
      context,
    });
  }
  // Required first reads best; all are keyword-only, so order does not change how calls look.
  return [...parameters.filter((parameter) => parameter.required), ...parameters.filter((p) => !p.required)];
}

function docstringOf(tool: ToolSpec, parameters: Parameter[]): string[] {
  const lines: string[] = [];
  const description = tool.description.trim() || `Calls the tool ${JSON.stringify(tool.name)}.`;
  lines.push(...description.split("\n").map((line) => line.trimEnd()));
  if (parameters.length > 0) {
    lines.push("", "Args:");
    for (const parameter of parameters) {
      const { schema } = parameter;
      const notes: string[] = [];
      if (parameter.description) notes.push(sentence(parameter.description));
      const constraints = constraintsOf(schema);
      if (constraints.length > 0) notes.push(`Constraints: ${constraints.join(", ")}.`);
      if (parameter.context.typedDicts) notes.push(variantsNote(schema, parameter.context.typedDicts));
      if (!parameter.required && schema.default !== undefined) notes.push(defaultNote(schema));
      else if (!parameter.required) notes.push("Optional; leave it out to use the tool's default.");
      else notes.push("Required.");
      if (parameter.originalName !== parameter.pythonName) {
        notes.push(`(The tool calls this argument ${JSON.stringify(parameter.originalName)}.)`);
      }
      lines.push(`    ${parameter.pythonName}: ${notes.filter(Boolean).join(" ")}`);
      lines.push(...describeFields(schema, "        ", 0, parameter.context));
    }
  }
  if (tool.outputSchema) {
    lines.push("", "Returns:");
    const what = tool.outputSchema.description ? `: ${sentence(tool.outputSchema.description)}` : "";
    lines.push(`    ${pythonType(tool.outputSchema, "output")}${what}`);
    lines.push(...describeFields(tool.outputSchema, "        ", 0, { direction: "output" }));
  }
  lines.push(
    "",
    "Raises:",
    "    ToolError: the tool failed (the message says why).",
    "    ToolDenied: the call was not approved.",
  );
  return lines;
}

function stubOf(given: ToolSpec, functionName: string, taken: Set<string>): StubbedTool {
  // $ref/$defs and allOf resolved first: the types below read plain schemas.
  const tool: ToolSpec = {
    ...given,
    inputSchema: inlineReferences(given.inputSchema ?? {}),
    ...(given.outputSchema ? { outputSchema: inlineReferences(given.outputSchema) } : {}),
  };
  const scope = new TypedDictScope(taken);
  const parameters = parametersOf(tool.inputSchema ?? {}, functionName, scope);
  const returnType = tool.outputSchema ? pythonType(tool.outputSchema, "output") : "Any";
  const parameterList = parameters.map((parameter) =>
    parameter.defaultLiteral === undefined
      ? `${parameter.pythonName}: ${parameter.annotation}`
      : `${parameter.pythonName}: ${parameter.annotation} = ${parameter.defaultLiteral}`,
  );
  const head =
    parameters.length === 0
      ? `def ${functionName}() -> ${returnType}:`
      : `def ${functionName}(*, ${parameterList.join(", ")}) -> ${returnType}:`;
  const docstring = docstringOf(tool, parameters).map((line) => (line ? `    ${docstringText(line)}` : ""));
  docstring[0] = `    """${docstring[0]?.trimStart() ?? ""}`;
  const typedDicts = scope.definitions.map((definition) => `${definition.source}\n`);
  const signature = [...typedDicts, head, ...docstring, '    """'].join("\n");

  const body: string[] = [];
  const sent = parameters.filter((parameter) => !parameter.omitWhenNone);
  const omittable = parameters.filter((parameter) => parameter.omitWhenNone);
  const entries = sent.map(
    (parameter) => `${JSON.stringify(parameter.originalName)}: ${parameter.pythonName}`,
  );
  body.push(`    _arguments = {${entries.join(", ")}}`);
  for (const parameter of omittable) {
    body.push(`    if ${parameter.pythonName} is not None:`);
    body.push(`        _arguments[${JSON.stringify(parameter.originalName)}] = ${parameter.pythonName}`);
  }
  body.push(`    return _call(${JSON.stringify(tool.name)}, _arguments)`);

  return {
    toolName: tool.name,
    functionName,
    argumentNames: Object.fromEntries(
      parameters.map((parameter) => [parameter.originalName, parameter.pythonName]),
    ),
    typeNames: scope.definitions.map((definition) => definition.name),
    signature,
    source: [signature, ...body].join("\n"),
  };
}

/** One stub per tool, with function names made valid and unique (in the tools' order). */
export function buildStubs(tools: ToolSpec[]): StubbedTool[] {
  const taken = new Set<string>();
  const functionNames = tools.map((tool) =>
    dedupe(toPythonIdentifier(tool.name, reservedFunctionNames), taken),
  );
  // TypedDict names stay clear of every function name and of what the stubs rely on.
  const typeNamesTaken = new Set([...taken, ...reservedFunctionNames]);
  return tools.map((tool, index) => stubOf(tool, functionNames[index] ?? "tool", typeNamesTaken));
}

/**
 * The Python source appended to the bridge's `codeaction_tools` module (which defines `_call`,
 * `ToolError`, `ToolDenied` and `ToolCallLimitExceeded`).
 */
export function renderStubsModule(tools: ToolSpec[]): string {
  const stubs = buildStubs(tools);
  const names = [
    "ToolError",
    "ToolDenied",
    "ToolCallLimitExceeded",
    ...stubs.flatMap((stub) => [...stub.typeNames, stub.functionName]),
  ];
  return [
    "# Tool stubs made by @codeaction/core from the tools' JSON schemas.",
    "import datetime",
    "from typing import Any, Literal, NotRequired, TypedDict",
    "",
    ...stubs.map((stub) => `${stub.source}\n`),
    `__all__ = [${names.map((name) => JSON.stringify(name)).join(", ")}]`,
    "",
  ].join("\n");
}

/** The stubs as the model sees them: signatures and docstrings, no bodies. */
export function renderStubSignatures(tools: ToolSpec[]): string {
  return buildStubs(tools)
    .map((stub) => stub.signature)
    .join("\n\n");
}
