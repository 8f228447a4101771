// The prompt's cost: tokens of the first model request for 10, 100 and 1,000 tools, counted with
// gpt-tokenizer's o200k_base (the GPT-4o / GPT-5 family's encoding). Three variants per size:
//   code-action             discovery on (the default): above 40 tools an index and a ```search step
//   code-action, no index   codeAction.discovery: false: every stub in the prompt
//   tools pattern           the tool schemas as the provider receives them (the request's `tools`)
// The tools are a generated catalogue (packages/cli/test/tool-catalogue.ts: one-line descriptions,
// four typed arguments) served by an MCP server over stdio; the model is a local OpenAI-compatible
// fixture, so the request measured is the HTTP body the real ChatOpenAI client sends. Code-action
// runs its one program in a real container (Docker needed).
// Usage: node bench/prompt-tokens.ts   (prints a table, writes bench/results/prompt-tokens.json)
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildAgent, parseServerCommand } from "@codeaction/core";
import { startOpenAIFixture } from "@codeaction/core/testing";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const catalogueServer = join(root, "packages/cli/test/fixtures/catalogue-server.ts");
const sizes = [10, 100, 1000];
const question = "What is the value of invoice A-1?";
const program = '```python\nprint("RESULT: " + str(billing_get_invoice(invoice_id="A-1")["value"]))\n```';
const search = "```search\nget a billing invoice\n```";

type Variant = "code-action" | "code-action, no index" | "tools pattern";
type Measure = {
  variant: Variant;
  tools: number;
  firstRequest: number;
  toolText: number;
  secondRequest?: number;
};
type RequestBody = { messages?: Array<{ role: string; content: unknown }>; tools?: unknown[] };

function textOf(content: unknown): string {
  return typeof content === "string" ? content : JSON.stringify(content);
}

/** All the request's text the model reads: each message's content, and the tools' JSON when present. */
function requestTokens(body: RequestBody): { total: number; toolText: number } {
  const messages = (body.messages ?? []).map((message) => textOf(message.content)).join("\n");
  const tools = body.tools ? JSON.stringify(body.tools) : "";
  const system = textOf(
    body.messages?.find((message) => ["system", "developer"].includes(message.role))?.content ?? "",
  );
  const functions = system.includes("\nFunctions:\n") ? system.slice(system.indexOf("\nFunctions:\n")) : "";
  return {
    total: countTokens(messages) + (tools ? countTokens(tools) : 0),
    toolText: tools ? countTokens(tools) : countTokens(functions),
  };
}

async function measure(variant: Variant, tools: number): Promise<Measure> {
  const discovery = variant === "code-action" && tools > 40;
  const fixture = await startOpenAIFixture({
    replies: variant === "tools pattern" ? ["The value is 1."] : discovery ? [search, program] : [program],
  });
  process.env.OPENAI_BASE_URL = fixture.baseURL;
  process.env.OPENAI_API_KEY = "fixture-key";
  const agent = await buildAgent({
    model: "openai:gpt-5-mini",
    pattern: variant === "tools pattern" ? "tools" : "code-action",
    servers: { catalogue: parseServerCommand(`node ${catalogueServer} ${tools}`) },
    ...(variant === "tools pattern"
      ? {}
      : { sandbox: { pool: 0 }, codeAction: variant === "code-action" ? {} : { discovery: false } }),
  });
  try {
    const result = await agent.invoke({ messages: [{ role: "user", content: question }] });
    if (result.status !== "answered")
      throw new Error(`${variant} with ${tools} tools: the turn ended ${result.status}`);
    const [first, second] = fixture.requests.map((request) => request.body as RequestBody);
    const counted = requestTokens(first ?? {});
    return {
      variant,
      tools,
      firstRequest: counted.total,
      toolText: counted.toolText,
      ...(discovery && second ? { secondRequest: requestTokens(second).total } : {}),
    };
  } finally {
    await agent.close();
    await fixture.close();
  }
}

const measures: Measure[] = [];
for (const tools of sizes) {
  for (const variant of ["code-action", "code-action, no index", "tools pattern"] as const) {
    process.stderr.write(`[prompt-tokens] ${variant}, ${tools} tools\n`);
    measures.push(await measure(variant, tools));
  }
}

const find = (variant: Variant, tools: number) =>
  measures.find((entry) => entry.variant === variant && entry.tools === tools)?.firstRequest ?? Number.NaN;
const largest = sizes.at(-1) ?? 1000;
const goals = {
  [`code-action, ${largest} tools: first request <= 5,000 tokens`]: find("code-action", largest) <= 5000,
  [`code-action, ${largest} tools: <= 10% of the tools pattern's`]:
    find("code-action", largest) <= 0.1 * find("tools pattern", largest),
  "code-action, 10 tools: the same as with no index":
    find("code-action", 10) === find("code-action, no index", 10),
};

const lines = [
  "tokens of the first model request (o200k_base, gpt-tokenizer)",
  `${"variant".padEnd(24)}${"tools".padStart(6)}${"first request".padStart(15)}${"of it tools".padStart(13)}${"after a search".padStart(16)}`,
  ...measures.map(
    (entry) =>
      `${entry.variant.padEnd(24)}${String(entry.tools).padStart(6)}${String(entry.firstRequest).padStart(15)}${String(entry.toolText).padStart(13)}${String(entry.secondRequest ?? "").padStart(16)}`,
  ),
  "",
  ...Object.entries(goals).map(([goal, met]) => `${met ? "met    " : "MISSED "} ${goal}`),
];
process.stdout.write(`${lines.join("\n")}\n`);
await mkdir(join(root, "bench/results"), { recursive: true });
await writeFile(
  join(root, "bench/results/prompt-tokens.json"),
  `${JSON.stringify({ tokenizer: "gpt-tokenizer o200k_base", measuredAt: new Date().toISOString(), measures, goals }, null, 2)}\n`,
);
