import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAgent, createFileRunStore } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { approvalHandlers } from "./approve-later.ts";

// docs/durable-runs.md's approve-later handlers with real containers: two agents (as two server
// processes would have), one store.
const folder = mkdtempSync(join(tmpdir(), "codeaction-approve-later-"));
const store = createFileRunStore(join(folder, "runs"));
const resumeSecret = randomBytes(32).toString("hex");
const refunded: number[] = [];
const refund = tool(
  async ({ order, amount }) => {
    refunded.push(amount);
    return { refund: `rf-${order}`, amount };
  },
  {
    name: "refund",
    description: "Refunds an order.",
    schema: z.object({ order: z.string(), amount: z.number() }),
  },
);
const program = 'done = refund(order="A-17", amount=120)\nprint("RESULT:", done["refund"])\n';

function agentWith(replies: string[]) {
  return buildAgent({
    model: new ScriptedChatModel(replies),
    pattern: "code-action",
    sandbox: { network: "none", pool: 0 },
    extraTools: [refund],
    approval: (call) => (call.tool === "refund" && Number(call.args.amount) > 100 ? "interrupt" : true),
    resumeSecret,
  });
}
const asking = await agentWith([`\`\`\`python\n${program}\`\`\``]);
const deciding = await agentWith([]);
afterAll(async () => {
  await Promise.all([asking.close(), deciding.close()]);
  rmSync(folder, { recursive: true, force: true });
});

describe("approve later in a web handler", () => {
  it("the question returns 202 with the pending call; the decision resumes the run once", async () => {
    const asked = await approvalHandlers(asking, store).ask("Refund order A-17.");
    expect(asked).toMatchObject({
      status: 202,
      body: { waitingFor: { tool: "refund", args: { order: "A-17", amount: 120 } } },
    });
    expect(refunded).toEqual([]);
    const runId = (asked.body as { runId: string }).runId;
    expect(await store.list()).toEqual([runId]);

    const decided = await approvalHandlers(deciding, store).decide(runId, true);
    expect(decided).toEqual({ status: 200, body: { answer: "rf-A-17" } });
    expect(refunded).toEqual([120]);
    expect(await approvalHandlers(deciding, store).decide(runId, true)).toMatchObject({ status: 404 });
    expect(refunded).toEqual([120]);
  });
});
