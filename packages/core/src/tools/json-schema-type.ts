/**
 * The TypeScript type of the values a JSON Schema accepts, for a schema written as a literal
 * (`buildAgent`'s `responseFormat` infers it as one; elsewhere write `as const`). Covers what answer
 * shapes use: `type` (one or a list), `properties` with `required`, `items`, `enum`, `const`,
 * `anyOf`/`oneOf`, and `nullable`-style `["string", "null"]`. Anything else (`$ref`, `allOf`,
 * `not`, patterns) is `unknown` where it appears: never a type that promises more than is checked.
 */
export type JsonSchemaType<Schema> = Schema extends { const: infer Constant }
  ? Constant
  : Schema extends { enum: readonly (infer Member)[] }
    ? Member
    : Schema extends { anyOf: readonly (infer Variant)[] }
      ? JsonSchemaType<Variant>
      : Schema extends { oneOf: readonly (infer Variant)[] }
        ? JsonSchemaType<Variant>
        : Schema extends { type: readonly (infer Name)[] }
          ? NamedType<Name, Schema>
          : Schema extends { type: infer Name }
            ? NamedType<Name, Schema>
            : Schema extends { properties: object }
              ? ObjectType<Schema>
              : unknown;

/** One `type` name (distributed over a list of names). */
type NamedType<Name, Schema> = Name extends "string"
  ? string
  : Name extends "number" | "integer"
    ? number
    : Name extends "boolean"
      ? boolean
      : Name extends "null"
        ? null
        : Name extends "array"
          ? Schema extends { items: infer Item }
            ? JsonSchemaType<Item>[]
            : unknown[]
          : Name extends "object"
            ? ObjectType<Schema>
            : unknown;

type RequiredKeys<Schema> = Schema extends { required: readonly (infer Key)[] } ? Key : never;

/** An object schema: its listed properties, required or optional; without `properties`, any object. */
type ObjectType<Schema> = Schema extends { properties: infer Properties }
  ? Flatten<
      { -readonly [Key in keyof Properties & RequiredKeys<Schema>]: JsonSchemaType<Properties[Key]> } & {
        -readonly [Key in Exclude<keyof Properties, RequiredKeys<Schema>>]?: JsonSchemaType<Properties[Key]>;
      }
    >
  : Record<string, unknown>;

type Flatten<Value> = { [Key in keyof Value]: Value[Key] };
