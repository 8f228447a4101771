/**
 * One side of a durable run, in a process of its own (tests/durable-runs.docker.test.ts).
 *   node tests/support/durable-run-child.ts interrupt <state file> <program: plain|timed>
 *     runs a turn whose program calls lookup, then charge_card (the hook answers "interrupt"),
 *     writes the interrupted state to the file.
 *   node tests/support/durable-run-child.ts resume <state file> <decision as JSON>
 *     builds the same agent (a model with no replies: a model call would fail) and resumes.
 * The resume secret comes from DURABLE_TEST_SECRET. Prints one JSON line: the outcome, the calls
 * each tool got in this process, the containers asked for, and this process's containers left.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { buildAgent, createCodeActionSandbox } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { connectDocker } from "@codeaction/sandbox";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { labelKeys } from "../../packages/sandbox/src/labels.ts";

const [mode, stateFile, argument] = process.argv.slice(2) as [string, string, string];
const calls = { lookup: 0, charge_card: 0 };
const lookup = tool(
  async ({ customer }) => {
    calls.lookup += 1;
    return { customer, balance: 42 };
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

const programs: Record<string, string> = {
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

const replies = mode === "interrupt" ? [`\`\`\`python\n${programs[argument]}\`\`\``] : [];
// No warm pool: every container is one a turn asked for, and this process's count says so.
const sandbox = createCodeActionSandbox({ network: "none", pool: 0 });
let containersAsked = 0;
const createSession = sandbox.createSession.bind(sandbox);
sandbox.createSession = (options) => {
  containersAsked += 1;
  return createSession(options);
};
const agent = await buildAgent({
  model: new ScriptedChatModel(replies),
  pattern: "code-action",
  sandbox,
  extraTools: [lookup, chargeCard],
  codeAction: { maxRepairs: 0 },
  approval: (call) => (call.tool === "charge_card" ? "interrupt" : true),
  resumeSecret: process.env.DURABLE_TEST_SECRET,
});

let outcome: Record<string, unknown>;
try {
  const result =
    mode === "interrupt"
      ? await agent.invoke("Charge Ada her balance.")
      : await agent.resume(JSON.parse(readFileSync(stateFile, "utf8")), JSON.parse(argument));
  if (result.status === "interrupted") writeFileSync(stateFile, JSON.stringify(result.interrupt.state));
  outcome = {
    status: result.status,
    answer: result.answer,
    pending: result.interrupt?.pending,
    attemptStatuses: result.attempts.map((attempt) => attempt.status),
  };
} catch (error) {
  const failure = error as Error & { code?: string; reason?: string; made?: unknown; logged?: unknown };
  outcome = {
    error: failure.name,
    code: failure.code,
    reason: failure.reason,
    made: failure.made,
    logged: failure.logged,
    message: failure.message,
  };
}
const { docker } = await connectDocker();
const left = await docker.listContainers({
  all: true,
  filters: { label: [`${labelKeys.ownerPid}=${process.pid}`] },
});
await agent.close();
await sandbox.close();
console.log(JSON.stringify({ ...outcome, calls, containersAsked, containersLeft: left.length }));
process.exit(0);
