import { buildAgent, createCodeActionSandbox, InterruptRefusedError } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { connectDocker } from "@codeaction/sandbox";
import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { labelKeys } from "../../packages/sandbox/src/labels.ts";

// An approval hook may answer "interrupt" only where the run can be resumed from its state. Where it
// cannot (several samples; a result the call log kept only as a digest), invoke throws a typed error
// naming the cause and the fix, the pending call is not made, and no container is left.

function tools(lookupBytes: number) {
  const calls = { lookup: 0, charge_card: 0 };
  const lookup = tool(
    async ({ customer }) => {
      calls.lookup += 1;
      return { customer, balance: 42, history: "x".repeat(lookupBytes) };
    },
    { name: "lookup", description: "A customer's account.", schema: z.object({ customer: z.string() }) },
  );
  const chargeCard = tool(
    async ({ customer, amount }) => {
      calls.charge_card += 1;
      return { receipt: `r-${customer}-${amount}` };
    },
    {
      name: "charge_card",
      description: "Charges a customer's card.",
      schema: z.object({ customer: z.string(), amount: z.number() }),
    },
  );
  return { calls, tools: [lookup, chargeCard] };
}

const program = `\`\`\`python
account = lookup(customer="ada")
receipt = charge_card(customer="ada", amount=account["balance"])
print("RESULT:", receipt["receipt"])
\`\`\``;

async function interruptWith(options: { samples: number; lookupBytes: number }) {
  const { calls, tools: extraTools } = tools(options.lookupBytes);
  const sandbox = createCodeActionSandbox({ network: "none", pool: 0 });
  const agent = await buildAgent({
    model: new ScriptedChatModel(Array(options.samples).fill(program)),
    pattern: "code-action",
    sandbox,
    extraTools,
    codeAction: { maxRepairs: 0, samples: options.samples },
    approval: (call) => (call.tool === "charge_card" ? "interrupt" : true),
    resumeSecret: "a-resume-secret-of-32-characters",
  });
  try {
    const error = await agent.invoke("Charge Ada her balance.").then(
      (result) => result,
      (thrown: unknown) => thrown,
    );
    const { docker } = await connectDocker();
    const left = await docker.listContainers({
      all: true,
      filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] },
    });
    return { error, calls, containersLeft: left.length };
  } finally {
    await agent.close();
    await sandbox.close();
  }
}

describe("an interrupt the run could not be resumed from", () => {
  it("with samples: 2, invoke throws InterruptRefusedError naming samples; charge_card is not called", async () => {
    const { error, calls, containersLeft } = await interruptWith({ samples: 2, lookupBytes: 0 });
    expect(InterruptRefusedError.isInstance(error)).toBe(true);
    const refused = error as InterruptRefusedError;
    expect(refused).toMatchObject({ code: "interrupt-refused", reason: "samples" });
    expect(refused.pending).toMatchObject({ tool: "charge_card", args: { customer: "ada", amount: 42 } });
    expect(refused.message).toContain("codeAction.samples: 2");
    expect(refused.message).toContain("samples: 1");
    expect(calls.charge_card).toBe(0);
    expect(containersLeft).toBe(0);
  });

  it("after a result over the call log's 1 MiB, invoke throws InterruptRefusedError naming that call", async () => {
    const { error, calls, containersLeft } = await interruptWith({ samples: 1, lookupBytes: 1100 * 1024 });
    expect(InterruptRefusedError.isInstance(error)).toBe(true);
    const refused = error as InterruptRefusedError;
    expect(refused).toMatchObject({
      reason: "result-not-kept",
      pending: { sequence: 2, tool: "charge_card" },
    });
    expect(refused.message).toContain("call 1 (lookup) returned");
    expect(refused.message).toContain("Have lookup return less");
    expect(calls).toEqual({ lookup: 1, charge_card: 0 });
    expect(containersLeft).toBe(0);
  });
});
