import type { Attempt } from "../types.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "attempts-exhausted";
const marker = "codeaction.core.attempts-exhausted-error";
const symbol = Symbol.for(marker);

/** Every attempt of a code-action turn failed (the first program and each repair). Carries them all. */
export class AttemptsExhaustedError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly attempts: Attempt[];
  readonly runId: string;

  constructor(options: { runId: string; attempts: Attempt[] }) {
    const last = options.attempts.at(-1);
    const summary = options.attempts.map((attempt) => `#${attempt.attempt} ${attempt.status}`).join(", ");
    const tail = last ? lastLines(last.stderr || last.stdout, 3) : "";
    super(
      `The code-action turn failed: all ${options.attempts.length} attempt(s) failed (${summary}).` +
        (tail ? ` Last output: ${tail}` : "") +
        " Each attempt (program, stdout, stderr, tool calls) is on error.attempts; raise codeAction.maxRepairs or rephrase the question.",
      { code },
    );
    this.name = "AttemptsExhaustedError";
    this.attempts = options.attempts;
    this.runId = options.runId;
  }

  static override isInstance(error: unknown): error is AttemptsExhaustedError {
    return CodeActionError.hasMarker(error, marker);
  }
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split("\n").slice(-count).join(" | ").slice(-400);
}
