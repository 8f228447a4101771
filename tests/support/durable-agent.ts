import { buildAgent, createCodeActionSandbox } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { connectDocker } from "@codeaction/sandbox";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { labelKeys } from "../../packages/sandbox/src/container/labels.ts";

// The durable-run tests' agent: lookup, then charge_card, which the approval hook interrupts. Used in
// a process of its own (durable-run-child.ts) and in the test process (interrupt-refused).

/** The programs a scripted model writes: a plain charge (denial caught), and one with a clock in its arguments. */
export const durablePrograms: Record<"plain" | "timed", string> = {
  plain: `
account = lookup(customer="ada")
try:
    receipt = charge_card(customer="ada", amount=account["balance"])
    print("RESULT:", receipt["receipt"])
except ToolDenied as denied:
    print("RESULT: not charged:", denied)
`,
  timed: `
import time
account = lookup(customer="ada")
receipt = charge_card(customer="ada", amount=account["balance"], at=time.time())
print("RESULT:", receipt["receipt"])
`,
};

/** lookup and charge_card, counting their calls; lookup's result carries `historyBytes` more when asked. */
export function ledgerTools(historyBytes = 0) {
  const calls = { lookup: 0, charge_card: 0 };
  const lookup = tool(
    async ({ customer }) => {
      calls.lookup += 1;
      return { customer, balance: 42, ...(historyBytes > 0 ? { history: "x".repeat(historyBytes) } : {}) };
    },
    { name: "lookup", description: "A customer's balance.", schema: z.object({ customer: z.string() }) },
  );
  const chargeCard = tool(
    async ({ customer, amount }) => {
      calls.charge_card += 1;
      return { receipt: `r-${customer}-${amount}` };
    },
    {
      name: "charge_card",
      description: "Charges a customer's card.",
      schema: z.object({ customer: z.string(), amount: z.number(), at: z.number().optional() }),
    },
  );
  return { calls, tools: [lookup, chargeCard] };
}

type CodeActionSandbox = ReturnType<typeof createCodeActionSandbox>;

/** No warm pool: every container is one a turn asked for. */
export function durableSandbox(): CodeActionSandbox {
  return createCodeActionSandbox({ network: "none", pool: 0 });
}

/** The agent whose approval hook answers "interrupt" for charge_card, with `replies` as the model's. */
export function buildDurableAgent(options: {
  replies: string[];
  sandbox: CodeActionSandbox;
  tools: ReturnType<typeof ledgerTools>["tools"];
  samples?: number;
  resumeSecret: string | undefined;
}) {
  return buildAgent({
    model: new ScriptedChatModel(options.replies),
    pattern: "code-action",
    sandbox: options.sandbox,
    extraTools: options.tools,
    codeAction: { maxRepairs: 0, ...(options.samples === undefined ? {} : { samples: options.samples }) },
    approval: (call) => (call.tool === "charge_card" ? "interrupt" : true),
    resumeSecret: options.resumeSecret,
  });
}

/** How many containers this process created and has not removed. */
export async function containersLeftByThisProcess(): Promise<number> {
  const { docker } = await connectDocker();
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] },
  });
  return left.length;
}
