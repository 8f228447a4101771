import { randomBytes } from "node:crypto";
import { buildAgent, type PendingCall, type ResumeDecision, type RunState } from "@codeaction/core";
import { ScriptedChatModel } from "@codeaction/core/testing";
import { tool } from "@langchain/core/tools";
import { Annotation, Command, END, interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";

// The agent inside a LangGraph.js graph (docs/durable-runs.md): one node runs the agent and keeps an
// interrupted run's state in the graph's state (the checkpointer stores it); the next node asks the
// person with LangGraph's interrupt() and resumes the agent with the Command's value.
const calls = { lookup: 0, charge_card: 0 };
const lookup = tool(
  async () => {
    calls.lookup += 1;
    return { balance: 42 };
  },
  { name: "lookup", description: "The balance.", schema: z.object({}) },
);
const chargeCard = tool(
  async ({ amount }) => {
    calls.charge_card += 1;
    return `charged ${amount}`;
  },
  { name: "charge_card", description: "Charges the card.", schema: z.object({ amount: z.number() }) },
);
const program = 'print("RESULT:", charge_card(amount=lookup()["balance"]))\n';
const agent = await buildAgent({
  model: new ScriptedChatModel([`\`\`\`python\n${program}\`\`\``]),
  pattern: "code-action",
  sandbox: { network: "none", pool: 0 },
  extraTools: [lookup, chargeCard],
  approval: (call) => (call.tool === "charge_card" ? "interrupt" : true),
  resumeSecret: randomBytes(32).toString("hex"),
});
afterAll(() => agent.close());

const GraphState = Annotation.Root({
  question: Annotation<string>,
  run: Annotation<RunState | undefined>,
  answer: Annotation<string | undefined>,
});
type Update = Partial<typeof GraphState.State>;

function settled(result: Awaited<ReturnType<typeof agent.invoke>>): Update {
  return result.status === "interrupted"
    ? { run: result.interrupt.state }
    : { run: undefined, answer: result.answer };
}

const graph = new StateGraph(GraphState)
  .addNode("agent", async (state) => settled(await agent.invoke(state.question)))
  .addNode("approval", async (state) => {
    const run = state.run as RunState;
    // Pauses the graph; on Command({ resume }) this node runs again and interrupt() returns the value.
    const decision = interrupt<PendingCall, ResumeDecision>(run.pending);
    return settled(await agent.resume(run, decision));
  })
  .addEdge(START, "agent")
  .addConditionalEdges("agent", (state) => (state.run ? "approval" : END))
  .addConditionalEdges("approval", (state) => (state.run ? "approval" : END))
  .compile({ checkpointer: new MemorySaver() });

describe("the agent in a LangGraph.js node", () => {
  it("interrupts the graph with the pending call, and Command({ resume }) continues the same run", async () => {
    const config = { configurable: { thread_id: `thread-${randomBytes(4).toString("hex")}` } };
    const paused = await graph.invoke({ question: "Charge the balance." }, config);
    expect((paused as { __interrupt__?: unknown }).__interrupt__).toMatchObject([
      { value: { tool: "charge_card", args: { amount: 42 } } },
    ]);
    expect(paused.answer).toBeUndefined();
    expect(calls).toEqual({ lookup: 1, charge_card: 0 });

    const done = await graph.invoke(new Command({ resume: true }), config);
    expect(done.answer).toBe("charged 42");
    expect(done.run).toBeUndefined();
    // The agent was not invoked again: lookup came from the call log, the charge was made once.
    expect(calls).toEqual({ lookup: 1, charge_card: 1 });
  });
});
