// A generated catalogue of tools for the discovery tests and the bench: `<domain>_<verb>_<noun>`
// (20 domains, 5 verbs, 10 nouns: up to 1,000 distinct tools), each with a one-line description,
// four typed arguments and an output schema, and a deterministic answer the tests can recompute.

const domains = [
  "billing",
  "crm",
  "inventory",
  "shipping",
  "weather",
  "payroll",
  "ticketing",
  "analytics",
  "calendar",
  "storage",
  "marketing",
  "security",
  "staffing",
  "fleet",
  "energy",
  "travel",
  "legal",
  "procurement",
  "support",
  "compliance",
];
const verbs = ["get", "list", "create", "update", "archive"];
const nouns = [
  "invoice",
  "customer",
  "record",
  "report",
  "order",
  "forecast",
  "account",
  "schedule",
  "contract",
  "metric",
];

/** One generated tool: what an MCP server's tools/list gives for it. */
export type CatalogueTool = {
  name: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, Record<string, unknown>>; required: string[] };
  outputSchema: { type: "object"; properties: Record<string, Record<string, unknown>>; required: string[] };
};

const verbText: Record<string, string> = {
  get: "Gets one",
  list: "Lists the",
  create: "Creates a",
  update: "Updates a",
  archive: "Archives a",
};

/** The first `count` tools of the catalogue (at most 1,000), domain by domain. */
export function generateCatalogue(count: number): CatalogueTool[] {
  if (count > domains.length * verbs.length * nouns.length) throw new RangeError("at most 1,000 tools");
  return Array.from({ length: count }, (_, index) => {
    const domain = domains[Math.floor(index / (verbs.length * nouns.length))] as string;
    const verb = verbs[Math.floor(index / nouns.length) % verbs.length] as string;
    const noun = nouns[index % nouns.length] as string;
    return {
      name: `${domain}_${verb}_${noun}`,
      description: `${verbText[verb]} ${noun} ${verb === "list" ? "entries" : "entry"} of the ${domain} service, with its value.`,
      inputSchema: {
        type: "object",
        properties: {
          [`${noun}_id`]: { type: "string", description: `the ${noun}'s id` },
          region: { type: "string", enum: ["emea", "apac", "amer"], description: "where it is kept" },
          limit: { type: "integer", minimum: 1, description: "most entries to return" },
          include_archived: { type: "boolean", description: "also archived entries" },
        },
        required: [`${noun}_id`],
      },
      outputSchema: {
        type: "object",
        properties: { id: { type: "string" }, value: { type: "integer" } },
        required: ["id", "value"],
      },
    };
  });
}

/** What a catalogue tool answers: the id it was asked for and a value made from its name and that id. */
export function catalogueAnswer(name: string, args: Record<string, unknown>): { id: string; value: number } {
  const id = String(Object.entries(args).find(([key]) => key.endsWith("_id"))?.[1] ?? "");
  let value = 0;
  for (const character of `${name}/${id}`) value = (value * 31 + (character.codePointAt(0) ?? 0)) % 9973;
  return { id, value };
}
