import type { JsonSchema } from "../tools/tool-spec.ts";

/**
 * Python types for JSON schemas, as the stubs show them. Inside a stub's arguments, a union of
 * objects (a `z.discriminatedUnion`, an `anyOf` of objects) becomes one TypedDict per variant, its
 * discriminator a `Literal[...]`, and the objects nested in a TypedDict become TypedDicts too, so
 * the model reads every variant's fields, descriptions and constraints in the annotation itself.
 */

export const pythonKeywords = new Set(
  (
    "False None True and as assert async await break class continue def del elif else except finally for " +
    "from global if import in is lambda nonlocal not or pass raise return try while with yield"
  ).split(" "),
);

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

/** How to type a schema: the direction, and where TypedDicts go (inputs of a stub only). */
export type TypeContext = {
  direction: Direction;
  typedDicts?: TypedDictScope;
  /** The PascalCase name a TypedDict made here starts with (`SearchFilter`). */
  name?: string;
  /** True inside a TypedDict, where nested objects become TypedDicts too. */
  nested?: boolean;
  depth?: number;
};

const maxTypedDictDepth = 4;

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

/** The Python type annotation for a JSON schema ("input" and no TypedDicts unless asked). */
export function pythonType(
  schema: JsonSchema | undefined,
  context: TypeContext | Direction = "input",
): string {
  const options = typeof context === "string" ? { direction: context } : context;
  if (!schema || typeof schema !== "object") return "Any";
  if (schema.const !== undefined) return `Literal[${pythonLiteral(schema.const)}]`;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const literals = schema.enum.filter((value) => value !== null).map(pythonLiteral);
    const nullable = schema.enum.includes(null);
    const literal = literals.length > 0 ? `Literal[${literals.join(", ")}]` : "None";
    return nullable && literals.length > 0 ? `${literal} | None` : literal;
  }
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length > 0) {
    const named = options.typedDicts?.variantTypes(schema, options);
    return joinUnion(named ?? union.map((variant) => pythonType(variant, options)));
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) return pythonType(schema.allOf[0], options);
  if (Array.isArray(schema.type)) {
    return joinUnion(schema.type.map((type) => pythonType({ ...schema, type }, options)));
  }
  return typeOfKind(schema, options);
}

function typeOfKind(schema: JsonSchema, options: TypeContext): string {
  switch (schema.type) {
    case "string":
      return (options.direction === "input" && dateFormats[String(schema.format)]) || "str";
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
      return `list[${pythonType(items, options)}]`;
    }
    case "object": {
      const additional = schema.additionalProperties;
      if (schema.properties && options.nested && options.typedDicts)
        return options.typedDicts.define(schema, options) ?? "dict[str, Any]";
      const valueType =
        typeof additional === "object" && additional !== null && !schema.properties
          ? pythonType(additional, options)
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

export function isNullable(schema: JsonSchema): boolean {
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
export function objectVariants(schema: JsonSchema): JsonSchema[] | undefined {
  const union = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(union)) return undefined;
  const objects = union.filter((variant) => variant.properties !== undefined);
  return objects.length > 0 ? objects : undefined;
}

/** The key whose `const` tells the variants apart (a discriminated union), if there is one. */
export function discriminatorOf(variants: JsonSchema[]): string | undefined {
  const keys = Object.keys(variants[0]?.properties ?? {});
  return keys.find((key) =>
    variants.every((variant) => {
      const property = variant.properties?.[key];
      return property !== undefined && (property.const !== undefined || property.enum?.length === 1);
    }),
  );
}

export function defaultNote(schema: JsonSchema): string {
  return schema.default === undefined ? "" : `Defaults to ${JSON.stringify(schema.default)}.`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** One line ending with a full stop (or the model's own ?, ! or :). */
export function sentence(text: string): string {
  const line = oneLine(text);
  return line === "" || /[.!?:]$/.test(line) ? line : `${line}.`;
}

/** `first-name`, `2fa`, `kind` -> `FirstName`, `2fa`, `Kind` (letters and digits only). */
export function pascalCase(text: string): string {
  return text
    .normalize("NFKD")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join("");
}

/**
 * The TypedDicts one set of stubs defines, in the order Python needs them (a TypedDict before
 * whatever refers to it). Names are unique across the module; one schema object gets one name.
 */
export class TypedDictScope {
  readonly definitions: { name: string; source: string }[] = [];
  readonly #taken: Set<string>;
  readonly #named = new Map<JsonSchema, string>();

  constructor(taken: Set<string>) {
    this.#taken = taken;
  }

  /** The TypedDict made for this schema object, if one was. */
  nameOf(schema: JsonSchema): string | undefined {
    return this.#named.get(schema);
  }

  /** One TypedDict per object variant of a union (others typed as usual), or undefined. */
  variantTypes(schema: JsonSchema, context: TypeContext): string[] | undefined {
    const union = schema.anyOf ?? schema.oneOf ?? [];
    const variants = objectVariants(schema);
    if (!variants || (context.depth ?? 0) >= maxTypedDictDepth) return undefined;
    const discriminator = discriminatorOf(variants);
    return union.map((variant) => {
      if (variant.properties === undefined) return pythonType(variant, context);
      const property = discriminator ? variant.properties[discriminator] : undefined;
      const value = property?.const ?? property?.enum?.[0];
      const label = value === undefined ? "" : pascalCase(String(value));
      const index = variants.indexOf(variant) + 1;
      // A model's own name when it has one (pydantic's `title` is its class name: `Address`).
      const titled = typeof variant.title === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(variant.title);
      const name = titled
        ? (variant.title as string)
        : `${context.name ?? "Arguments"}${label || `Variant${index}`}`;
      return this.define(variant, { ...context, name }) ?? "dict[str, Any]";
    });
  }

  /** The TypedDict for an object schema (made once), or undefined past the depth limit. */
  define(schema: JsonSchema, context: TypeContext): string | undefined {
    const known = this.#named.get(schema);
    if (known) return known;
    const depth = context.depth ?? 0;
    if (depth >= maxTypedDictDepth) return undefined;
    const name = this.#unique(context.name || "Arguments");
    this.#named.set(schema, name);
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(([key, property]) => {
      const fieldContext = { ...context, name: `${name}${pascalCase(key)}`, nested: true, depth: depth + 1 };
      const type = pythonType(property, fieldContext);
      const notes = [
        property.description ? sentence(property.description) : "",
        constraintsOf(property).length > 0 ? `Constraints: ${constraintsOf(property).join(", ")}.` : "",
        defaultNote(property),
      ].filter(Boolean);
      return {
        key,
        type: required.has(key) ? type : `NotRequired[${type}]`,
        comment: notes.length > 0 ? `  # ${notes.join(" ")}` : "",
      };
    });
    const about = schema.description ? [`    # ${sentence(schema.description)}`] : [];
    const classSyntax = fields.every(
      ({ key }) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && !pythonKeywords.has(key),
    );
    const source = classSyntax
      ? [
          `class ${name}(TypedDict):`,
          ...about,
          ...fields.map(({ key, type, comment }) => `    ${key}: ${type}${comment}`),
          ...(fields.length === 0 ? ["    pass"] : []),
        ].join("\n")
      : [
          `${name} = TypedDict("${name}", {`,
          ...about,
          ...fields.map(({ key, type, comment }) => `    ${JSON.stringify(key)}: ${type},${comment}`),
          "})",
        ].join("\n");
    this.definitions.push({ name, source });
    return name;
  }

  #unique(base: string): string {
    const start = /^[A-Za-z_]/.test(base) ? base : `T${base}`;
    let candidate = start;
    for (let index = 2; this.#taken.has(candidate) || pythonKeywords.has(candidate); index += 1)
      candidate = `${start}${index}`;
    this.#taken.add(candidate);
    return candidate;
  }
}
