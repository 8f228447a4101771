import { execFile } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// What `import "@codeaction/core"` loads, seen through Node's module hooks in a fresh process: the
// OpenAI client and the MCP SDK are loaded only when a model string or a server asks for them, so
// a CLI run with a replayed model (or an agent without servers) does not pay for them.

const run = promisify(execFile);
const packageFolder = dirname(dirname(fileURLToPath(import.meta.url)));

const probe = `
import { registerHooks } from "node:module";
const packages = new Set();
registerHooks({
  resolve(specifier, context, next) {
    const resolved = next(specifier, context);
    const match = /node_modules\\/(?:\\.pnpm\\/[^/]+\\/node_modules\\/)?((?:@[^/]+\\/)?[^/]+)\\//.exec(resolved.url);
    if (match) packages.add(match[1]);
    return resolved;
  },
});
const core = await import("@codeaction/core");
const before = [...packages];
if (process.argv.includes("--model")) await (await core.buildAgent({ model: "openai:gpt-5-mini" })).close();
console.log(JSON.stringify({ before, after: [...packages] }));
`;

async function loaded(...args: string[]): Promise<{ before: string[]; after: string[] }> {
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", probe, "--", ...args], {
    cwd: packageFolder,
    env: { ...process.env, OPENAI_API_KEY: "sk-example-not-a-real-key" },
    timeout: 60_000,
  });
  return JSON.parse(stdout) as { before: string[]; after: string[] };
}

describe("on-demand imports", () => {
  it("importing @codeaction/core loads @langchain/core, not @langchain/openai or the MCP SDK", async () => {
    const { before } = await loaded();
    expect(before).toContain("@langchain/core");
    expect(before).not.toContain("@langchain/openai");
    expect(before).not.toContain("openai");
    expect(before).not.toContain("@modelcontextprotocol/sdk");
  });

  it('an "openai:" model string loads @langchain/openai when it is asked for', async () => {
    const { before, after } = await loaded("--model");
    expect(before).not.toContain("@langchain/openai");
    expect(after).toContain("@langchain/openai");
  });
});
