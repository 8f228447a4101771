import type { ResumeDecision, RunState } from "../durable/run-state.ts";
import { AttemptsExhaustedError } from "../errors/attempts-exhausted-error.ts";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { StepSpace } from "../steps/step-space.ts";
import type { TurnOutcome } from "./agreement.ts";
import { fromStateMessages } from "./interrupt.ts";
import { runSample } from "./repair-loop.ts";
import { noFiles, type TurnContext } from "./turn-context.ts";

/**
 * An interrupted run, continued: the interrupted sample's program runs again in a fresh container
 * (no model call), its logged calls answered from the log, the pending call given `decision`; a
 * failed program is repaired with the repairs the sample had left. A state holds one program: a turn
 * with several samples refuses to be interrupted (InterruptRefusedError), except in its escalation,
 * whose program decides alone.
 */
export async function resumeTurn(
  context: TurnContext,
  state: RunState,
  decision: ResumeDecision,
): Promise<TurnOutcome> {
  const { settings, model } = context.options;
  const { attempt } = state;
  // With steps, the interpreter is rebuilt first: the steps before the interrupted one re-executed.
  const space = state.steps ? StepSpace.fromHistory(state.steps) : undefined;
  space?.beginRun();
  const outcome = await runSample(context, {
    model: attempt.escalated && settings.escalate ? settings.escalate.model : model,
    opening: fromStateMessages(state.modelMessages),
    ...(attempt.sample === undefined ? {} : { sample: attempt.sample }),
    ...(attempt.escalated ? { escalated: true } : {}),
    ...(space ? { space } : {}),
    resume: {
      attempt: attempt.number,
      ...(state.steps ? { step: state.steps.step } : {}),
      reply: attempt.modelReply,
      logged: state.callLog,
      pending: { call: state.pending, decision },
    },
  }).finally(() => space?.release(context));
  if (outcome.answer === undefined) {
    throw new AttemptsExhaustedError({ runId: context.runId, attempts: outcome.attempts });
  }
  return {
    answer: outcome.answer,
    status: attempt.escalated ? "escalated" : "ok",
    attempts: outcome.attempts,
    files: outcome.files ?? noFiles,
  };
}

/**
 * Refuses a state this turn cannot resume, before anything starts: its program was written against
 * other tools (names or schemas), or its log kept only a digest of a result the program needs again.
 */
export function checkResumable(state: RunState, turn: { stubsDigest: string; toolNames: string[] }): void {
  if (state.tools?.digest !== turn.stubsDigest) {
    const theirs = state.tools?.names?.join(", ") || "none";
    throw new ResumeStateError({
      reason: "mismatch",
      message: `resume refused: run ${state.runId}'s program was written against other tools (${theirs}) than this agent's (${turn.toolNames.join(", ") || "none"}), or the same tools with other schemas. Resume it with an agent built with the same tools.`,
    });
  }
  const missing = state.callLog.find((entry) => entry.status === "ok" && entry.result === undefined);
  if (missing) {
    throw new ResumeStateError({
      reason: "unavailable",
      message: `resume refused: call ${missing.sequence} (${missing.tool}) of run ${state.runId} returned ${missing.resultRef?.bytes ?? "?"} bytes, more than the call log copies, so the log kept only its digest and the program cannot be answered from it. Have the tool return less (filter, page or aggregate).`,
    });
  }
}
