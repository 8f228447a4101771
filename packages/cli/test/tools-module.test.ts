import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAgent } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repositoryRoot, runCli } from "./run-cli.ts";
import { runMain } from "./run-main.ts";

// `codeaction tools --module ./tools.js` as a process (its refusals in this process, through
// main()), and agent.describeTools() for the same tools: the stubs the model sees, one text either way.

const fixture = join(repositoryRoot, "packages/cli/test/fixtures/lookup-tools.mjs");
let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "codeaction-tools-module-"));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe("the stubs of one's own LangChain tools", { timeout: 120_000 }, () => {
  it("codeaction tools --module prints what agent.describeTools() returns for the same tools", async () => {
    // A process: Node's own import() of the user's module (its namespace's order of exports), which
    // Vitest's module runner does not reproduce in this process.
    const run = await runCli(["tools", "--module", fixture]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("def lookup_customer(*, id: str) -> Any:");
    expect(run.stdout).toContain("def order_count() -> Any:");
    expect(run.stdout).toContain("id: The customer's id, like C-1. Required.");

    const module = (await import(fixture)) as { default: unknown[]; lookupCustomer: unknown };
    await using agent = await buildAgent({
      model: new ScriptedChatModel([]),
      extraTools: [...module.default, module.lookupCustomer] as never,
    });
    expect(agent.describeTools()).toBe(run.stdout.trimEnd());
  });

  it("a module with no tool, and one that cannot be imported, are refused with what to export", async () => {
    const empty = join(folder, "empty.mjs");
    await writeFile(empty, "export const answer = 42;\n");
    const none = await runMain(["tools", "--module", empty]);
    expect(none.exitCode).toBe(1);
    expect(none.stderr).toContain(`--module ${empty} exports no LangChain tool. Export each tool()`);
    const missing = await runMain(["tools", "--module", join(folder, "absent.mjs")]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/--module .*absent\.mjs could not be imported/);
  });
});
