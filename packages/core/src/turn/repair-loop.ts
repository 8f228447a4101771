import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { Logger } from "pino";
import { SandboxRunError } from "../errors/sandbox-run-error.ts";
import { StepLimitError } from "../errors/step-limit-error.ts";
import { buildRepairMessage, buildReplyRepairMessage, describeFailure, tail } from "../prompt/prompt.ts";
import type { StepSpace } from "../steps/step-space.ts";
import { buildStepObservation } from "../steps/steps-prompt.ts";
import type { Attempt } from "../types.ts";
import { type AttemptOutcome, runAttempt } from "./attempt.ts";
import { noFiles, type SampleOptions, type SampleOutcome, type TurnContext } from "./turn-context.ts";

const streamTailCharacters = 2000;

/**
 * One sample: attempts until one succeeds or `maxRepairs` repairs are used. A failed attempt's
 * program and what went wrong go back to the model as the next repair; a sandbox failure ends the
 * turn (a SandboxRunError), since repairing the program cannot fix it. With steps (a `space`), a
 * program that ends without RESULT and without error is a step: its output and what the
 * interpreter holds go back to the model, and the next program runs in the same interpreter; each
 * step has its own `maxRepairs`, and past `maxSteps` steps the run ends with a StepLimitError.
 */
export async function runSample(
  context: TurnContext,
  sampleOptions: SampleOptions & { space?: StepSpace | undefined },
): Promise<SampleOutcome> {
  const { settings } = context.options;
  const { sample, escalated, space } = sampleOptions;
  const maxSteps = settings.maxSteps ?? 1;
  const logger = context.logger?.child({
    ...(sample ? { sample } : {}),
    ...(escalated ? { escalated } : {}),
  });
  const modelMessages = [...sampleOptions.opening];
  const attempts: Attempt[] = [];

  const first = sampleOptions.resume?.attempt ?? 1;
  let step = sampleOptions.resume?.step ?? 1;
  // Repairs used in this step (a resumed attempt counts the ones before it).
  let repairs = space ? 0 : first - 1;
  for (let attemptNumber = first; ; attemptNumber += 1) {
    context.signal.throwIfAborted();
    const outcome = await runAttempt(context, {
      ...sampleOptions,
      // Only a resumed run's first attempt is given; its repairs ask the model as usual.
      resume: attemptNumber === first ? sampleOptions.resume : undefined,
      attemptNumber,
      ...(space ? { step } : {}),
      modelMessages,
      attemptsSoFar: attempts,
      ...(logger ? { logger } : {}),
    });
    const { attempt, run } = outcome;
    attempts.push(attempt);
    context.attempts.push(attempt);
    reportAttemptEnd(context, attempt, logger);

    if (attempt.status === "ok") return { attempts, answer: attempt.result, files: outcome.files ?? noFiles };
    context.signal.throwIfAborted();
    if (attempt.status === "infrastructure") {
      const detail = run?.infrastructureError;
      throw new SandboxRunError({
        runId: context.runId,
        attempts,
        cause: detail,
        detail: detail ?? "unknown",
      });
    }
    if (space && maxSteps > 1 && attempt.status === "no-result" && run?.living) {
      if (step >= maxSteps) throw new StepLimitError({ runId: context.runId, maxSteps, attempts });
      modelMessages.push(...observeStep(outcome, { step, stepsLeft: maxSteps - step - 1, space }));
      step += 1;
      repairs = 0;
      continue;
    }
    if (repairs >= settings.maxRepairs) break;
    repairs += 1;
    modelMessages.push(...askForRepair(context, outcome));
  }
  return { attempts };
}

/** The two messages after a step: the program's reply, and its output with what the interpreter holds. */
function observeStep(
  outcome: AttemptOutcome,
  where: { step: number; stepsLeft: number; space: StepSpace },
): BaseMessage[] {
  const { attempt, run } = outcome;
  const lost = where.space.lost;
  where.space.lost = undefined;
  const observation = buildStepObservation({
    step: where.step,
    stepsLeft: where.stepsLeft,
    stdout: attempt.stdout,
    stderr: attempt.stderr,
    summary: run?.summary ?? "",
    lost,
  });
  return [new AIMessage({ content: attempt.modelReply }), new HumanMessage(observation)];
}

/** The `program-end` event and the debug line of an attempt that ended. */
function reportAttemptEnd(context: TurnContext, attempt: Attempt, logger: Logger | undefined): void {
  const { status, sample } = attempt;
  context.emit({
    type: "program-end",
    runId: context.runId,
    attempt: attempt.attempt,
    ...(sample ? { sample } : {}),
    ...(attempt.step === undefined ? {} : { step: attempt.step }),
    status,
    exitCode: attempt.exitCode,
    stdoutTail: tail(attempt.stdout, streamTailCharacters),
    stderrTail: tail(attempt.stderr, streamTailCharacters),
  });
  logger?.debug(
    { attempt: attempt.attempt, status, exitCode: attempt.exitCode, toolCalls: attempt.toolCalls.length },
    `code-action exit=${attempt.exitCode} status=${status} stdout=${JSON.stringify(attempt.stdout)} stderr=${JSON.stringify(attempt.stderr)}`,
  );
}

/**
 * The `repair-start` event, and the two messages the next attempt adds to the conversation: the
 * failed reply, and what went wrong (the run's failure, or why the reply held no program).
 */
function askForRepair(context: TurnContext, outcome: AttemptOutcome): BaseMessage[] {
  const { settings } = context.options;
  const { attempt, refusal } = outcome;
  const limits = { execTimeout: settings.execTimeout, maxToolCalls: settings.maxToolCalls };
  const reason = refusal ?? describeFailure({ ...attempt, ...limits });
  context.emit({
    type: "repair-start",
    runId: context.runId,
    attempt: attempt.attempt + 1,
    ...(attempt.sample ? { sample: attempt.sample } : {}),
    reason,
  });
  const toolError = [...attempt.toolCalls].reverse().find((call) => call.error)?.error;
  const repair =
    refusal === undefined
      ? buildRepairMessage({ ...attempt, ...limits, toolError })
      : buildReplyRepairMessage(refusal);
  return [new AIMessage({ content: attempt.modelReply }), new HumanMessage(repair)];
}
