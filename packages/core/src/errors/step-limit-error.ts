import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "step-limit";
const marker = "codeaction.core.step-limit-error";
const symbol = Symbol.for(marker);

/** One step of a run that used every step: the program and its output (its last attempt's). */
export type StepRecord = { step: number; program: string; stdout: string; stderr: string };

/**
 * A run with steps (codeAction.maxSteps) used every step without printing a RESULT line. Carries
 * each step's program and output (`steps`), and every attempt (repairs included).
 */
export class StepLimitError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  readonly maxSteps: number;
  readonly steps: StepRecord[];
  readonly attempts: Attempt[];

  constructor(options: { runId: string; maxSteps: number; attempts: Attempt[] }) {
    const steps = new Map<number, StepRecord>();
    for (const attempt of options.attempts) {
      if (attempt.step === undefined) continue;
      const { step, program, stdout, stderr } = attempt;
      steps.set(step, { step, program, stdout, stderr });
    }
    super(
      `The run used all ${options.maxSteps} steps (codeAction.maxSteps) without printing a RESULT line. Each step's program and output is on error.steps; raise codeAction.maxSteps, or ask a narrower question.`,
      { code },
    );
    this.name = "StepLimitError";
    this.runId = options.runId;
    this.maxSteps = options.maxSteps;
    this.steps = [...steps.values()];
    this.attempts = options.attempts;
  }

  static override isInstance(error: unknown): error is StepLimitError {
    return CodeActionError.hasMarker(error, marker);
  }
}
