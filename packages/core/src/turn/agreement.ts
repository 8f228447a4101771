import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { AttemptsExhaustedError } from "../errors/attempts-exhausted-error.ts";
import { DisagreementError, type SampleRun } from "../errors/disagreement-error.ts";
import type { ChatModelRunnable } from "../model/model.ts";
import type { CollectedFiles } from "../output/output-files.ts";
import { buildEscalationMessage, describeFailure, type EscalationCandidate } from "../prompt/prompt.ts";
import type { StepSpace } from "../steps/step-space.ts";
import type { Attempt } from "../types.ts";
import { normalizeAnswer } from "./normalize-answer.ts";
import { runSample } from "./repair-loop.ts";
import { type CodeActionSettings, noFiles, type SampleOutcome, type TurnContext } from "./turn-context.ts";

export type TurnOutcome = {
  answer: string;
  status: "ok" | "escalated";
  attempts: Attempt[];
  files: CollectedFiles;
};

/**
 * The turn's answer from its samples: the answer a strict majority agrees on; else the escalation
 * model's (when one is set); else a DisagreementError (samples answered, differently) or an
 * AttemptsExhaustedError (none answered).
 */
export async function agreeOrEscalate(
  context: TurnContext,
  outcomes: SampleOutcome[],
  escalation: { system: BaseMessage; question: string; space?: StepSpace | undefined },
): Promise<TurnOutcome> {
  const { runId } = context;
  const { settings } = context.options;
  const attempts = outcomes.flatMap((outcome) => outcome.attempts);
  const decision = decide(outcomes, settings);
  if (decision.answer !== undefined) {
    const files = outcomes[decision.sampleIndex]?.files ?? noFiles;
    return { answer: decision.answer, status: "ok", attempts, files };
  }
  if (settings.escalate) {
    const escalated = await escalate(context, outcomes, { ...escalation, model: settings.escalate.model });
    const all = [...attempts, ...escalated.attempts];
    if (escalated.answer !== undefined)
      return {
        answer: escalated.answer,
        status: "escalated",
        attempts: all,
        files: escalated.files ?? noFiles,
      };
    throw new AttemptsExhaustedError({ runId, attempts: all });
  }
  if (decision.anySucceeded && settings.samples > 1)
    throw new DisagreementError({ runId, samples: sampleRuns(outcomes, settings) });
  throw new AttemptsExhaustedError({ runId, attempts });
}

/** Strict majority of all samples (so both of two); the answer of the first sample in that group. */
function decide(
  outcomes: SampleOutcome[],
  settings: CodeActionSettings,
): { answer?: string; sampleIndex: number; anySucceeded: boolean } {
  const groups = new Map<string, number[]>();
  outcomes.forEach((outcome, index) => {
    if (outcome.answer === undefined) return;
    const key = normalizeAnswer(outcome.answer, { decimals: settings.decimals });
    groups.set(key, [...(groups.get(key) ?? []), index]);
  });
  for (const indexes of groups.values()) {
    const first = indexes[0]!;
    if (indexes.length * 2 > outcomes.length)
      return { answer: outcomes[first]?.answer, sampleIndex: first, anySucceeded: true };
  }
  return { sampleIndex: -1, anySucceeded: groups.size > 0 };
}

/** Each sample's attempts and answer, normalized as the agreement check compared it. */
function sampleRuns(outcomes: SampleOutcome[], settings: CodeActionSettings): SampleRun[] {
  return outcomes.map((outcome, index) => ({
    sample: index + 1,
    attempts: outcome.attempts,
    answer: outcome.answer,
    normalizedAnswer:
      outcome.answer === undefined
        ? undefined
        : normalizeAnswer(outcome.answer, { decimals: settings.decimals }),
  }));
}

/**
 * One more sample by the escalation model, shown every sample's last program and how it ended. With
 * steps or a thread it runs in the same interpreter (`space`, as a repair would), so it finds what
 * the conversation's programs and the failed ones left there.
 */
function escalate(
  context: TurnContext,
  outcomes: SampleOutcome[],
  escalation: {
    system: BaseMessage;
    question: string;
    model: ChatModelRunnable;
    space?: StepSpace | undefined;
  },
): Promise<SampleOutcome> {
  const { settings } = context.options;
  const limits = { execTimeout: settings.execTimeout, maxToolCalls: settings.maxToolCalls };
  const candidates: EscalationCandidate[] = outcomes.map((outcome) => {
    const last = outcome.attempts.at(-1);
    return {
      program: last?.program ?? "",
      answer: outcome.answer,
      failure: last ? describeFailure({ ...last, ...limits }) : undefined,
    };
  });
  context.logger?.debug(
    { samples: outcomes.map((outcome) => outcome.answer ?? null) },
    "code-action escalating",
  );
  return runSample(context, {
    model: escalation.model,
    opening: [
      escalation.system,
      new HumanMessage(buildEscalationMessage({ question: escalation.question, candidates })),
    ],
    sample: settings.samples > 1 ? settings.samples + 1 : undefined,
    escalated: true,
    ...(escalation.space ? { space: escalation.space } : {}),
  });
}
