import { CodeActionError } from "./code-action-error.ts";

const code = "replay-diverged";
const marker = "codeaction.core.replay-divergence-error";
const symbol = Symbol.for(marker);

/** A call as the divergence names it: its position, tool, and arguments (their canonical JSON, cut to 500 characters). */
export type DivergentCall = { sequence: number; tool: string; args: string };

/**
 * A resumed or replayed program made a call that differs from its run's call log at `sequence` (a
 * different tool or different arguments, or a call the log does not hold). The program was stopped
 * at that call: it reached no tool, and nothing after it ran. `logged` is undefined when the log
 * ends before the call.
 */
export class ReplayDivergenceError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  readonly logged: DivergentCall | undefined;
  readonly made: DivergentCall;

  constructor(options: { runId: string; logged: DivergentCall | undefined; made: DivergentCall }) {
    const { logged, made } = options;
    const was = logged
      ? `the log holds ${describe(logged)}`
      : `the log holds only ${made.sequence - 1} call(s)`;
    super(
      `Run ${options.runId} diverged from its call log at call ${made.sequence}: the program called ${describe(made)}, but ${was}. The program was stopped there and the call was not made. A program whose calls depend on the time, on randomness beyond the seeded \`random\` module, or on the network cannot be resumed or replayed; make its calls depend only on its tools' results.`,
      { code },
    );
    this.name = "ReplayDivergenceError";
    this.runId = options.runId;
    this.logged = logged;
    this.made = made;
  }

  static override isInstance(error: unknown): error is ReplayDivergenceError {
    return CodeActionError.hasMarker(error, marker);
  }
}

function describe(call: DivergentCall): string {
  return `${call.tool}(${call.args})`;
}
