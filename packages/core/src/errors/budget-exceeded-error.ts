import type { BudgetLimit, RunUsage } from "../budget/usage.ts";
import { CodeActionError } from "./code-action-error.ts";

const code = "budget-exceeded";
const marker = "codeaction.core.budget-exceeded-error";
const symbol = Symbol.for(marker);

const what: Record<BudgetLimit, string> = {
  maxTokens: "tokens",
  maxModelCalls: "model calls",
  maxCostUsd: "US dollars",
  maxWallSeconds: "seconds of wall time",
};

/**
 * A run reached its budget (`buildAgent({ budget })` or `configurable.budget`): it stopped before
 * the model call that would go past the limit (or at the limit, for wall time), its program was
 * killed and its containers removed. `usage` is what the run used until then.
 */
export class BudgetExceededError extends CodeActionError {
  protected readonly [symbol] = true;
  readonly runId: string;
  /** Which limit was hit. */
  readonly limit: BudgetLimit;
  /** The limit's value. */
  readonly budget: number;
  /** What the run used until it stopped. */
  readonly usage: RunUsage;
  /** Seconds from the start of the run until it stopped. */
  readonly elapsedSeconds: number;

  constructor(options: {
    runId: string;
    limit: BudgetLimit;
    budget: number;
    usage: RunUsage;
    elapsedSeconds: number;
  }) {
    super(
      `Run ${options.runId} stopped at its budget: ${options.limit} is ${options.budget} ${what[options.limit]} ` +
        `(used: ${describeUsage(options.usage)}, ${options.elapsedSeconds.toFixed(1)} s). Raise budget.${options.limit} (buildAgent or configurable.budget) if the run needs more.`,
      { code },
    );
    this.name = "BudgetExceededError";
    this.runId = options.runId;
    this.limit = options.limit;
    this.budget = options.budget;
    this.usage = options.usage;
    this.elapsedSeconds = options.elapsedSeconds;
  }

  static override isInstance(error: unknown): error is BudgetExceededError {
    return CodeActionError.hasMarker(error, marker);
  }
}

function describeUsage(usage: RunUsage): string {
  const parts = [
    `${usage.modelCalls} model call(s)`,
    ...(usage.totalTokens === undefined ? [] : [`${usage.totalTokens} tokens`]),
    ...(usage.costUsd === undefined ? [] : [`$${usage.costUsd.toFixed(6)}`]),
  ];
  return parts.join(", ");
}
