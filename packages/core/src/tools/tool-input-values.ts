import { ToolInputError } from "../errors/tool-input-error.ts";
import type { JsonSchema } from "./tool-spec.ts";
import { pickVariants, schemaAlternatives } from "./unknown-keys.ts";

/**
 * Dates and bigints in a tool's input. JSON has no form for them, so a program (or a tools-pattern
 * model) sends an ISO 8601 string for a date and an integer, or a string of its digits, for a
 * bigint; the stubs' Python side sends a `datetime` as its ISO string and an int past 2^53 as its
 * digits, so nothing is rounded on the way. The tool's JSON schema marks those fields (key
 * `valueMarker`), and `reviveInputValues` turns them back into a Date or a bigint before the tool's
 * own zod schema validates them. Markers stay on the host: `withoutValueMarkers` removes them from
 * the schema the model and the stubs see.
 */
export const valueMarker = "x-codeaction-value";

export type ValueKind = "date" | "bigint";

const maxDepth = 64;
const integerDigits = /^-?[0-9]+$/;
// An offset (Z, +02:00, -0500) at the end of a date-time; without one the time is read as UTC.
const timeZoneSuffix = /(Z|[+-][0-9]{2}(:?[0-9]{2})?)$/i;
const isoDate =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?)?$/i;

/** True when some field of the schema is marked (the tool takes a date or a bigint somewhere). */
export function hasValueMarkers(schema: unknown): boolean {
  return JSON.stringify(schema).includes(`"${valueMarker}"`);
}

/** A copy of the schema without the markers (what the model, the stubs and the records see). */
export function withoutValueMarkers<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item) => withoutValueMarkers(item)) as T;
  if (typeof schema !== "object" || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key !== valueMarker) copy[key] = withoutValueMarkers(value);
  }
  return copy as T;
}

/**
 * `args` with every marked field turned into a Date or a bigint (a copy; `args` is not changed).
 * A value that cannot be one (a date string that is not ISO 8601, an integer JSON may have rounded)
 * is a ToolInputError naming the tool, the field and what to send instead. Anything else is left
 * for the tool's own schema to judge.
 */
export function reviveInputValues(
  toolName: string,
  schema: JsonSchema,
  args: Record<string, unknown>,
): Record<string, unknown> {
  const revived = revive({ root: schema, toolName }, [schema], args, "", 0);
  return revived as Record<string, unknown>;
}

type Walk = { root: JsonSchema; toolName: string };

function revive(state: Walk, schemas: JsonSchema[], value: unknown, path: string, depth: number): unknown {
  if (depth > maxDepth || value === null || value === undefined) return value;
  const alternatives = schemas
    .flatMap((schema) => schemaAlternatives(state.root, schema))
    .filter((alternative): alternative is JsonSchema => alternative !== undefined);
  const kinds = new Set(alternatives.map((alternative) => alternative[valueMarker]));
  if (kinds.has("date") && typeof value === "string") return reviveDate(state, value, path, alternatives);
  if (kinds.has("bigint") && (typeof value === "string" || typeof value === "number"))
    return reviveBigint(state, value, path, alternatives);
  if (Array.isArray(value)) {
    const items = alternatives.flatMap((alternative) =>
      alternative.items && !Array.isArray(alternative.items) ? [alternative.items] : [],
    );
    if (items.length === 0) return value;
    return value.map((item, index) => revive(state, items, item, `${path}[${index}]`, depth + 1));
  }
  if (typeof value !== "object") return value;
  const objects = pickVariants(
    alternatives.filter((alternative) => alternative.properties !== undefined),
    value as Record<string, unknown>,
  );
  if (objects.length === 0) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const declaring = objects.flatMap((object) => {
      const property = object.properties?.[key];
      return property === undefined ? [] : [property];
    });
    copy[key] = declaring.length === 0 ? item : revive(state, declaring, item, join(path, key), depth + 1);
  }
  return copy;
}

function reviveDate(state: Walk, text: string, path: string, alternatives: JsonSchema[]): unknown {
  const trimmed = text.trim();
  const date = isoDate.test(trimmed) ? parseIsoDate(trimmed) : undefined;
  if (date !== undefined) return date;
  // `string | date` in the tool's schema: a plain string is a valid value as it is.
  if (alternatives.some((alternative) => alternative[valueMarker] === undefined)) return text;
  throw new ToolInputError({
    tool: state.toolName,
    issues:
      `${path || "the argument"}: ${JSON.stringify(text.slice(0, 80))} is not an ISO 8601 date or date-time; ` +
      "pass a datetime.datetime, a datetime.date or a string such as '2025-03-01' or '2025-03-01T09:30:00Z'",
  });
}

/** The date an ISO 8601 string names; a date-time without an offset is read as UTC. */
function parseIsoDate(text: string): Date | undefined {
  const normalized = text.replace(" ", "T");
  const withZone =
    normalized.includes("T") && !timeZoneSuffix.test(normalized) ? `${normalized}Z` : normalized;
  const date = new Date(withZone);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function reviveBigint(
  state: Walk,
  value: string | number,
  path: string,
  alternatives: JsonSchema[],
): unknown {
  if (typeof value === "string") {
    if (integerDigits.test(value.trim())) return BigInt(value.trim());
    if (alternatives.some((alternative) => alternative[valueMarker] === undefined)) return value;
    throw new ToolInputError({
      tool: state.toolName,
      issues: `${path || "the argument"}: ${JSON.stringify(value.slice(0, 80))} is not an integer; pass an int (or a string of its digits)`,
    });
  }
  if (!Number.isInteger(value)) return value;
  if (Number.isSafeInteger(value)) return BigInt(value);
  throw new ToolInputError({
    tool: state.toolName,
    issues:
      `${path || "the argument"}: ${value} is past 2^53, so JSON may have rounded it; ` +
      "send the integer's digits as a string (a Python int is sent exactly)",
  });
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
