import { buildAgent, recordRun, replayRun } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";

// A run recorded against a live tool, then replayed offline: no model, no tool, a fresh container.
let lookups = 0;
const lookup = tool(
  async ({ customer }) => {
    lookups += 1;
    return { customer, balance: customer.length * 10 };
  },
  { name: "lookup", description: "A customer's balance.", schema: z.object({ customer: z.string() }) },
);
// The RESULT depends on the tool's answers, on `random` (seeded from the run) and on str hashes
// (PYTHONHASHSEED is fixed): a replay reproduces all three.
const program = `
import random
names = sorted({"ada", "grace", "linus"})
total = sum(lookup(customer=name)["balance"] for name in names)
print("RESULT:", total, random.randint(0, 10**9), hash("ada") % 1000, list({"x", "y", "z"}))
`;
const agent = await buildAgent({
  model: new ScriptedChatModel([`\`\`\`python\n${program}\`\`\``]),
  pattern: "code-action",
  sandbox: { network: "none", pool: 0 },
  extraTools: [lookup],
  codeAction: { maxRepairs: 0 },
});
afterAll(() => agent.close());

describe("replayRun", () => {
  it("reproduces a recorded run with no model and no tools, and names the first difference of an edited one", async () => {
    const result = await agent.invoke("Total balance?");
    expect(result.status).toBe("answered");
    expect(lookups).toBe(3);
    const record = recordRun(result, agent.tools);
    expect(record.callLog.map((entry) => entry.args)).toEqual([
      { customer: "ada" },
      { customer: "grace" },
      { customer: "linus" },
    ]);

    const replayed = await replayRun(record);
    expect(replayed).toEqual({ status: "reproduced", runId: result.runId, result: result.answer, calls: 3 });
    expect(lookups).toBe(3);

    // A stored result edited: the program computes another total.
    const edited = structuredClone(record);
    edited.callLog[0]!.result = '{"customer":"ada","balance":1000}';
    const changed = await replayRun(edited);
    expect(changed).toMatchObject({ status: "differs", kind: "result" });
    expect(changed.status === "differs" && changed.difference).toContain(
      `the record says ${JSON.stringify(result.answer)}`,
    );

    // A program that calls with other arguments stops at that call.
    const other = { ...record, program: record.program.replace('"grace"', '"hopper"') };
    const diverged = await replayRun(other);
    expect(diverged).toMatchObject({ status: "differs", kind: "call", sequence: 2 });
    expect(diverged.status === "differs" && diverged.difference).toContain('lookup({"customer":"hopper"})');
    expect(lookups).toBe(3);
  });
});
