import { type JSONSchema, toJsonSchema, Validator } from "@langchain/core/utils/json_schema";
import {
  type InferInteropZodOutput,
  type InteropZodType,
  interopSafeParse,
  isInteropZodSchema,
} from "@langchain/core/utils/types";
import type { JsonSchemaType } from "./tools/json-schema-type.ts";

/**
 * `responseFormat`: the shape a turn's answer must have, as LangChain's createAgent takes it: a zod
 * schema (v3 or v4), or a JSON Schema object. The model is told the shape, the answer is parsed as
 * JSON and checked, and a mismatch is repaired like any other failure.
 */
export type ResponseFormat = InteropZodType | Record<string, unknown>;

/**
 * The type of `result.structured` for a response format: a zod schema's output, the values a
 * literal JSON Schema accepts (JsonSchemaType), or unknown.
 */
export type StructuredOf<Format> = Format extends InteropZodType
  ? InferInteropZodOutput<Format>
  : Format extends Record<string, unknown>
    ? JsonSchemaType<Format>
    : unknown;

/** A compiled response format: the JSON Schema the model is shown, and the check of an answer. */
export type AnswerShape = {
  /** The JSON Schema as text, for the prompt. */
  schemaText: string;
  /** The same JSON Schema as an object, for providers' native structured output. */
  schema: Record<string, unknown>;
  check(answer: string): AnswerCheck;
};

export type AnswerCheck = { ok: true; value: unknown } | { ok: false; problem: string };

/** A JSON Schema names at least one of these (an object with none would accept anything). */
const schemaKeywords = ["type", "properties", "items", "anyOf", "oneOf", "allOf", "enum", "const", "$ref"];

/** At most this many mismatches are named in a repair message. */
const listedProblems = 8;

/** Compiles `responseFormat`; throws a TypeError naming the fix when it is neither zod nor JSON Schema. */
export function compileResponseFormat(format: ResponseFormat): AnswerShape {
  if (isInteropZodSchema(format)) {
    const schema = withoutDialect(toJsonSchema(format)) as Record<string, unknown>;
    return {
      schemaText: JSON.stringify(schema),
      schema,
      check: (answer) => checkParsed(answer, (value) => checkWithZod(format, value)),
    };
  }
  if (typeof format !== "object" || format === null || Array.isArray(format)) {
    throw new TypeError("responseFormat must be a zod schema or a JSON Schema object");
  }
  if (!schemaKeywords.some((keyword) => keyword in format)) {
    throw new TypeError(
      `responseFormat is neither a zod schema nor a JSON Schema (it has none of ${schemaKeywords.join(", ")}). Pass the schema itself: LangChain's toolStrategy() and providerStrategy() wrappers are not taken.`,
    );
  }
  let validator: Validator;
  try {
    validator = new Validator(format as never, "2020-12", false);
  } catch (error) {
    throw new TypeError(`responseFormat is not a usable JSON Schema: ${(error as Error).message}`);
  }
  const schema = withoutDialect(format as JSONSchema) as Record<string, unknown>;
  return {
    schemaText: JSON.stringify(schema),
    schema,
    check: (answer) => checkParsed(answer, (value) => checkWithJsonSchema(validator, value)),
  };
}

/** The answer's JSON value when it is JSON (a ```json fence around it is allowed), else undefined. */
export function parseJsonAnswer(
  answer: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  const fenced = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n\s*```\s*$/.exec(answer);
  const text = (fenced?.[1] ?? answer).trim();
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

function checkParsed(answer: string, check: (value: unknown) => AnswerCheck): AnswerCheck {
  const parsed = parseJsonAnswer(answer);
  if (!parsed.ok) {
    const start = answer.trim().slice(0, 80);
    return {
      ok: false,
      problem: `the answer is not JSON (${parsed.reason}); it starts with ${JSON.stringify(start)}`,
    };
  }
  return check(parsed.value);
}

function checkWithZod(format: InteropZodType, value: unknown): AnswerCheck {
  const parsed = interopSafeParse(format, value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = (parsed.error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues ?? [];
  return {
    ok: false,
    problem: listProblems(issues.map((issue) => `${pathText(issue.path)}: ${issue.message}`)),
  };
}

/** Keywords whose error only says that something below them failed (that error is named instead). */
const containerKeywords = new Set([
  "properties",
  "items",
  "prefixItems",
  "additionalProperties",
  "patternProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "$ref",
  "allOf",
  "contains",
  "dependentSchemas",
]);

function checkWithJsonSchema(validator: Validator, value: unknown): AnswerCheck {
  const outcome = validator.validate(value);
  if (outcome.valid) return { ok: true, value };
  const problems = outcome.errors
    .filter((error) => !containerKeywords.has(error.keyword))
    .map((error) => {
      const path = pathText(error.instanceLocation.replace(/^#\/?/, "").split("/").filter(Boolean));
      const message = error.keyword === "false" ? "not allowed here" : error.error;
      return `${path}: ${message}`;
    });
  const named = problems.length > 0 ? problems : outcome.errors.map((error) => error.error);
  return { ok: false, problem: listProblems(named) };
}

function listProblems(problems: string[]): string {
  const unique = [...new Set(problems)];
  const shown = unique.slice(0, listedProblems).join("; ");
  const more = unique.length > listedProblems ? ` (and ${unique.length - listedProblems} more)` : "";
  return `the answer does not match the required shape: ${shown}${more}`;
}

/** ["items", 0, "name"] -> "items[0].name"; [] -> "(the whole answer)". */
function pathText(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(the whole answer)";
  return path
    .map((part, index) => {
      const text = String(part);
      if (typeof part === "number" || /^\d+$/.test(text)) return `[${text}]`;
      return index === 0 ? text : `.${text}`;
    })
    .join("");
}

function withoutDialect(schema: JSONSchema): JSONSchema {
  const { $schema: _dialect, ...rest } = schema as JSONSchema & { $schema?: string };
  return rest as JSONSchema;
}
