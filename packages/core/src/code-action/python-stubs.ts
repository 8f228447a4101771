import type { JsonSchema, ToolSpec } from "../tool-spec.ts";

/**
 * Python stubs made from tool schemas. Each tool becomes a real Python function with keyword-only,
 * typed arguments and a docstring; its body calls the bridge's `_call(<original name>, {args})`.
 * Names that are not Python identifiers are made into valid ones and mapped back here.
 */

const pythonKeywords = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for " +
    "from global if import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);

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
  /** `def ...:` plus its docstring, without a body: what the model sees. */
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

/** A Python literal for a JSON value. */
export function pythonLiteral(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "None";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(", ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value).map(
      ([key, item]) => `${JSON.stringify(key)}: ${pythonLiteral(item)}`,
    );
    return `{${entries.join(", ")}}`;
  }
  return JSON.stringify(String(value));
}

/**
 * Which way a value goes: a program's argument ("input") may be a `datetime` where the schema wants
 * a date-time string (the stubs send its ISO form); a tool's answer ("output") is the string itself.
 */
export type Direction = "input" | "output";

/** Python types a program may pass for a string of these formats (sent as their `isoformat()`). */
const dateFormats: Record<string, string> = {
  "date-time": "datetime.datetime | str",
  date: "datetime.date | str",
  time: "datetime.time | str",
};

/** The Python type annotation for a JSON schema. */
export function pythonType(schema: JsonSchema | undefined, direction: Direction = "input"): string {
  if (!schema || typeof schema !== "object") return "Any";
  if (schema.const !== undefined) return `Literal[${pythonLiteral(schema.const)}]`;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const literals = schema.enum.filter((value) => value !== null).map(pythonLiteral);
    const nullable = schema.enum.includes(null);
    const literal = literals.length > 0 ? `Literal[${literals.join(", ")}]` : "None";
    return nullable && literals.length > 0 ? `${literal} | None` : literal;
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0)
    return joinUnion(union.map((variant) => pythonType(variant, direction)));
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return pythonType(schema.allOf[0], direction);
  if (Array.isArray(schema.type)) {
    return joinUnion(schema.type.map((type) => pythonType({ ...schema, type }, direction)));
  }
  switch (schema.type) {
    case "string":
      return (direction === "input" && dateFormats[String(schema.format)]) || "str";
    case "integer":
      return "int";
    case "number":
      return "float";
    case "boolean":
      return "bool";
    case "null":
      return "None";
    case "array": {
      const items = Array.isArray(schema.items) ? undefined : schema.items;
      return `list[${pythonType(items, direction)}]`;
    }
    case "object": {
      const additional = schema.additionalProperties;
      const valueType =
        typeof additional === "object" && additional !== null && !schema.properties
          ? pythonType(additional, direction)
          : "Any";
      return `dict[str, ${valueType}]`;
    }
    default:
      return schema.properties ? "dict[str, Any]" : "Any";
  }
}

function joinUnion(types: string[]): string {
  const unique = [...new Set(types)];
  if (unique.includes("Any")) return "Any";
  // None goes last, as people write it.
  const withoutNone = unique.filter((type) => type !== "None");
  return [...withoutNone, ...(unique.includes("None") ? ["None"] : [])].join(" | ");
}

function isNullable(schema: JsonSchema): boolean {
  const type = pythonType(schema);
  return type === "Any" || type === "None" || type.endsWith("| None");
}

/** The schema's constraints and format, as short phrases (">= 1", "at most 3 items", "format: email"). */
export function constraintsOf(schema: JsonSchema): string[] {
  const phrases: string[] = [];
  const number = (key: string) => (typeof schema[key] === "number" ? (schema[key] as number) : undefined);
  const minimum = number("minimum");
  const maximum = number("maximum");
  // Draft 4 writes exclusive bounds as booleans next to minimum/maximum; later drafts as numbers.
  if (minimum !== undefined) phrases.push(`${schema.exclusiveMinimum === true ? ">" : ">="} ${minimum}`);
  if (number("exclusiveMinimum") !== undefined) phrases.push(`> ${number("exclusiveMinimum")}`);
  if (maximum !== undefined) phrases.push(`${schema.exclusiveMaximum === true ? "<" : "<="} ${maximum}`);
  if (number("exclusiveMaximum") !== undefined) phrases.push(`< ${number("exclusiveMaximum")}`);
  if (number("multipleOf") !== undefined) phrases.push(`a multiple of ${number("multipleOf")}`);
  const count = (key: string, least: boolean, unit: string) => {
    const value = number(key);
    if (value !== undefined)
      phrases.push(`${least ? "at least" : "at most"} ${value} ${unit}${value === 1 ? "" : "s"}`);
  };
  count("minLength", true, "character");
  count("maxLength", false, "character");
  count("minItems", true, "item");
  count("maxItems", false, "item");
  count("minProperties", true, "key");
  count("maxProperties", false, "key");
  if (schema.uniqueItems === true) phrases.push("no duplicates");
  if (typeof schema.format === "string") phrases.push(`format: ${schema.format}`);
  // A format says what its (often huge, generated) pattern checks; a pattern alone is shown.
  else if (typeof schema.pattern === "string") phrases.push(`matching /${schema.pattern}/`);
  if (schema.items && !Array.isArray(schema.items)) {
    const items = constraintsOf(schema.items);
    if (items.length > 0) phrases.push(`each item ${items.join(", ")}`);
  }
  return phrases;
}

/** The object variants of a union (anyOf/oneOf), or undefined when it is not a union of objects. */
function objectVariants(schema: JsonSchema): JsonSchema[] | undefined {
  const union = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(union)) return undefined;
  const objects = union.filter((variant) => variant.properties !== undefined);
  return objects.length > 0 ? objects : undefined;
}

/** The key whose `const` tells the variants apart (a discriminated union), if there is one. */
function discriminatorOf(variants: JsonSchema[]): string | undefined {
  const keys = Object.keys(variants[0]?.properties ?? {});
  return keys.find((key) =>
    variants.every((variant) => {
      const property = variant.properties?.[key];
      return property !== undefined && (property.const !== undefined || property.enum?.length === 1);
    }),
  );
}

/** Lines describing a schema's nested fields and union variants, for the docstring. */
function describeFields(
  schema: JsonSchema | undefined,
  indent: string,
  depth: number,
  direction: Direction = "input",
): string[] {
  if (!schema || depth > 4) return [];
  const target = schema.type === "array" && !Array.isArray(schema.items) ? schema.items : schema;
  if (!target) return [];
  const variants = objectVariants(target);
  if (variants) return describeVariants(variants, indent, depth, direction);
  if (!target.properties) return [];
  const required = new Set(target.required ?? []);
  const lines: string[] = [];
  for (const [name, property] of Object.entries(target.properties)) {
    const flags = [
      pythonType(property, direction),
      required.has(name) ? undefined : "optional",
      ...constraintsOf(property),
    ]
      .filter(Boolean)
      .join(", ");
    const notes = [property.description ? sentence(property.description) : "", defaultNote(property)]
      .filter(Boolean)
      .join(" ");
    lines.push(`${indent}${name} (${flags})${notes ? `: ${notes}` : ""}`);
    lines.push(...describeFields(property, `${indent}    `, depth + 1, direction));
  }
  return lines;
}

function describeVariants(
  variants: JsonSchema[],
  indent: string,
  depth: number,
  direction: Direction,
): string[] {
  const discriminator = discriminatorOf(variants);
  const lines = [`${indent}One of${discriminator ? ` (told apart by "${discriminator}")` : ""}:`];
  variants.forEach((variant, index) => {
    const property = discriminator ? variant.properties?.[discriminator] : undefined;
    const value = property?.const ?? property?.enum?.[0];
    const label = discriminator ? `${discriminator}=${pythonLiteral(value)}` : `variant ${index + 1}`;
    const about = variant.description ? `: ${sentence(variant.description)}` : "";
    lines.push(`${indent}    ${label}${about}`);
    lines.push(...describeFields(variant, `${indent}        `, depth + 1, direction));
  });
  return lines;
}

function defaultNote(schema: JsonSchema): string {
  return schema.default === undefined ? "" : `Defaults to ${JSON.stringify(schema.default)}.`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** One line ending with a full stop (or the model's own ?, ! or :). */
function sentence(text: string): string {
  const line = oneLine(text);
  return line === "" || /[.!?:]$/.test(line) ? line : `${line}.`;
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
};

function parametersOf(schema: JsonSchema): Parameter[] {
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  const taken = new Set<string>();
  const parameters: Parameter[] = [];
  for (const [originalName, property] of Object.entries(properties)) {
    const pythonName = dedupe(toPythonIdentifier(originalName, reservedArgumentNames), taken);
    const isRequired = required.has(originalName);
    let annotation = pythonType(property);
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
      if (!parameter.required && schema.default !== undefined) notes.push(defaultNote(schema));
      else if (!parameter.required) notes.push("Optional; leave it out to use the tool's default.");
      else notes.push("Required.");
      if (parameter.originalName !== parameter.pythonName) {
        notes.push(`(The tool calls this argument ${JSON.stringify(parameter.originalName)}.)`);
      }
      lines.push(`    ${parameter.pythonName}: ${notes.join(" ")}`);
      lines.push(...describeFields(schema, "        ", 0));
    }
  }
  if (tool.outputSchema) {
    lines.push("", "Returns:");
    const what = tool.outputSchema.description ? `: ${sentence(tool.outputSchema.description)}` : "";
    lines.push(`    ${pythonType(tool.outputSchema, "output")}${what}`);
    lines.push(...describeFields(tool.outputSchema, "        ", 0, "output"));
  }
  lines.push(
    "",
    "Raises:",
    "    ToolError: the tool failed (the message says why).",
    "    ToolDenied: the call was not approved.",
  );
  return lines;
}

function stubOf(tool: ToolSpec, functionName: string): StubbedTool {
  const parameters = parametersOf(tool.inputSchema ?? {});
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
  const signature = [head, ...docstring, '    """'].join("\n");

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
    signature,
    source: [signature, ...body].join("\n"),
  };
}

/** One stub per tool, with function names made valid and unique (in the tools' order). */
export function buildStubs(tools: ToolSpec[]): StubbedTool[] {
  const taken = new Set<string>();
  return tools.map((tool) =>
    stubOf(tool, dedupe(toPythonIdentifier(tool.name, reservedFunctionNames), taken)),
  );
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
    ...stubs.map((stub) => stub.functionName),
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
