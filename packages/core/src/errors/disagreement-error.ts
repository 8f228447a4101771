import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "disagreement";
const marker = "codeaction.core.disagreement-error";
const symbol = Symbol.for(marker);

/** One independent sample of a turn: its attempts and, when one succeeded, its answer. */
export type SampleRun = {
  sample: number;
  attempts: Attempt[];
  answer?: string;
  normalizedAnswer?: string;
};

/**
 * With `codeAction.samples` of 2 or more, the programs did not agree (both for 2, a strict majority
 * for 3 or more) and no escalation model decided. Nothing is guessed: every run is here.
 */
export class DisagreementError extends CodeActionError {
  protected readonly [symbol] = true;
  /** How the turn ended: the samples disagreed. */
  readonly status = "disagree" as const;
  readonly samples: SampleRun[];
  readonly runId: string;

  constructor(options: { runId: string; samples: SampleRun[] }) {
    const answers = options.samples
      .map((sample) => `#${sample.sample}: ${sample.answer ?? "(failed)"}`)
      .join("; ");
    super(
      `The ${options.samples.length} independent programs did not agree (${answers}). ` +
        "Each program and its output is on error.samples; set codeAction.escalate to let a stronger model decide.",
      { code },
    );
    this.name = "DisagreementError";
    this.samples = options.samples;
    this.runId = options.runId;
  }

  static override isInstance(error: unknown): error is DisagreementError {
    return CodeActionError.hasMarker(error, marker);
  }
}
