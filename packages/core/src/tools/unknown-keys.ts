import type { JsonSchema } from "./tool-spec.ts";

/**
 * Unknown keys in a call's arguments, found by walking the tool's JSON schema along the value.
 * Validators such as zod strip unknown keys silently, so `filter={"region": ...}` for a schema with
 * `regions` would run without the filter: a wrong answer that looks right. Here an object schema
 * with `properties` accepts only those keys unless it allows extra ones (`additionalProperties`
 * true or a schema, or `patternProperties`). Unions take the keys of their object variants (the
 * variant a `const` discriminator picks, when one does); local `$ref`s are followed; a schema this
 * walk does not understand allows everything.
 */
export type UnknownKey = { path: string; key: string; suggestion?: string; validKeys: string[] };

const maxIssues = 10;
const maxDepth = 64;

export function findUnknownKeys(schema: JsonSchema, args: unknown): UnknownKey[] {
  const found: UnknownKey[] = [];
  walk({ root: schema, found }, [schema], args, "", 0);
  return found;
}

/**
 * "filter.region: unknown key; did you mean 'regions'?" (or "...; the keys are: a, b." when none is
 * close) for each, joined by "; ".
 */
export function describeUnknownKeys(unknown: UnknownKey[]): string {
  return unknown
    .map((item) => {
      const where = item.path ? `${item.path}.${item.key}` : item.key;
      const listed = item.validKeys.slice(0, 20).join(", ") + (item.validKeys.length > 20 ? ", ..." : "");
      const hint =
        item.suggestion === undefined ? `; the keys are: ${listed}.` : `; did you mean '${item.suggestion}'?`;
      return `${where}: unknown key${hint}`;
    })
    .join("; ");
}

type Walk = { root: JsonSchema; found: UnknownKey[] };

function walk(state: Walk, schemas: JsonSchema[], value: unknown, path: string, depth: number): void {
  if (depth > maxDepth || state.found.length >= maxIssues) return;
  const variants = schemas.flatMap((schema) => schemaAlternatives(state.root, schema));
  if (variants.length === 0 || variants.some((variant) => variant === undefined)) return;
  const known = variants as JsonSchema[];
  if (Array.isArray(value)) {
    const items = known.flatMap((variant) =>
      variant.items && !Array.isArray(variant.items) ? [variant.items] : [],
    );
    if (items.length === 0) return;
    for (const [index, item] of value.entries()) walk(state, items, item, `${path}[${index}]`, depth + 1);
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const objects = pickVariants(
    known.filter((variant) => variant.properties !== undefined),
    value as Record<string, unknown>,
  );
  if (objects.length === 0 || objects.some(allowsExtraKeys)) return;
  const names = [...new Set(objects.flatMap((variant) => Object.keys(variant.properties ?? {})))];
  for (const [key, item] of Object.entries(value)) {
    const declaring = objects.flatMap((variant) => {
      const property = variant.properties?.[key];
      return property === undefined ? [] : [property];
    });
    if (declaring.length === 0) {
      const suggestion = closestName(key, names);
      state.found.push({ path, key, validKeys: names, ...(suggestion === undefined ? {} : { suggestion }) });
      if (state.found.length >= maxIssues) return;
      continue;
    }
    walk(state, declaring, item, path ? `${path}.${key}` : key, depth + 1);
  }
}

/**
 * A schema's alternatives, flattened: anyOf/oneOf variants, allOf parts merged, `$ref`s resolved
 * against `root`. `undefined` stands for "anything goes" (a schema this walk cannot follow).
 */
export function schemaAlternatives(
  root: JsonSchema,
  schema: JsonSchema | boolean,
): (JsonSchema | undefined)[] {
  return expand(root, schema, 0);
}

function expand(root: JsonSchema, schema: JsonSchema | boolean, depth: number): (JsonSchema | undefined)[] {
  if (typeof schema !== "object" || schema === null || depth > 16) return [undefined];
  if (typeof schema.$ref === "string") {
    const target = resolveReference(root, schema.$ref);
    return target === undefined ? [undefined] : expand(root, target, depth + 1);
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return union.flatMap((variant) => expand(root, variant, depth + 1));
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.flatMap((part) => expand(root, part, depth + 1));
    if (parts.some((part) => part === undefined)) return [undefined];
    const objects = (parts as JsonSchema[]).filter((part) => part.properties !== undefined);
    if (objects.length === 0) return parts;
    const properties = Object.assign({}, schema.properties, ...objects.map((part) => part.properties));
    return [{ ...schema, allOf: undefined, properties, additionalProperties: false }];
  }
  return [schema];
}

/** The schema a local `$ref` (`#`, `#/$defs/Name`, any JSON pointer into `root`) points at, or undefined. */
export function resolveReference(root: JsonSchema, reference: string): JsonSchema | undefined {
  if (reference === "#") return root;
  if (!reference.startsWith("#/")) return undefined;
  let target: unknown = root;
  for (const part of reference.slice(2).split("/")) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof target !== "object" || target === null) return undefined;
    target = (target as Record<string, unknown>)[key];
  }
  return typeof target === "object" && target !== null ? (target as JsonSchema) : undefined;
}

/** The variants a `const` (or one-value enum) discriminator in `value` selects; else all of them. */
export function pickVariants(variants: JsonSchema[], value: Record<string, unknown>): JsonSchema[] {
  if (variants.length < 2) return variants;
  const matching = variants.filter((variant) =>
    Object.entries(variant.properties ?? {}).every(([key, property]) => {
      const fixed = constantOf(property);
      return fixed === undefined || !(key in value) || value[key] === fixed.value;
    }),
  );
  return matching.length > 0 ? matching : variants;
}

function constantOf(schema: JsonSchema): { value: unknown } | undefined {
  if (schema.const !== undefined) return { value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return { value: schema.enum[0] };
  return undefined;
}

function allowsExtraKeys(schema: JsonSchema): boolean {
  const additional = schema.additionalProperties;
  if (additional === true || (typeof additional === "object" && additional !== null)) return true;
  return typeof schema.patternProperties === "object" && schema.patternProperties !== null;
}

/** The valid name closest to `key` (case, `_`/`-` and a few typed letters apart), if one is close. */
export function closestName(key: string, names: string[]): string | undefined {
  const fold = (name: string) => name.replace(/[_-]/g, "").toLowerCase();
  const folded = fold(key);
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(folded, fold(name));
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  return best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= right.length; column += 1) {
      const substitution = (previous[column - 1] ?? 0) + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min((previous[column] ?? 0) + 1, (current[column - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}
