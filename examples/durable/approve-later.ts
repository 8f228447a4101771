// Approve later in a web application: the request that asks a question returns at once when the
// program wants to refund a large amount; a manager decides (minutes or days later, in any process);
// the decision request resumes the run. Framework-free handlers: mount them on any HTTP router.
import { type Agent, createFileRunStore, type ResumeDecision, type RunStore } from "@codeaction/core";

export type Reply =
  | { status: 200; body: { answer: string } }
  | { status: 202; body: { runId: string; waitingFor: { tool: string; args: unknown } } }
  | { status: 404; body: { error: string } };

export function approvalHandlers(agent: Agent, store: RunStore = createFileRunStore(".codeaction/runs")) {
  /** What the run came to: its answer, or the call it waits on (its state kept in the store). */
  async function settle(result: Awaited<ReturnType<Agent["invoke"]>>): Promise<Reply> {
    if (result.status !== "interrupted") return { status: 200, body: { answer: result.answer } };
    await store.save(result.interrupt.state);
    const { tool, args } = result.interrupt.pending;
    return { status: 202, body: { runId: result.runId, waitingFor: { tool, args } } };
  }

  return {
    /** POST /questions { question } */
    ask: async (question: string): Promise<Reply> => settle(await agent.invoke(question)),
    /** POST /runs/:runId/decision { approved, reason }: take() hands the state out once. */
    decide: async (runId: string, decision: ResumeDecision): Promise<Reply> => {
      const state = await store.take(runId);
      if (!state) return { status: 404, body: { error: `no run ${runId} waits for a decision` } };
      return settle(await agent.resume(state, decision));
    },
  };
}
