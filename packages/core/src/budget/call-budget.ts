import { ConfigError } from "../errors/config-error.ts";
import { type Budget, budgetSchema } from "./usage.ts";

/** The budget of one call: the agent's, with `configurable.budget`'s limits over it. */
export function callBudget(agentBudget: Budget | undefined, override: unknown): Budget | undefined {
  if (override === undefined) return agentBudget;
  const parsed = budgetSchema.safeParse(override);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => (issue.path.length ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
      .join("; ");
    throw new ConfigError({
      message: `configurable.budget: ${problems}. A budget takes maxTokens, maxModelCalls, maxCostUsd and maxWallSeconds, each a positive number.`,
      cause: parsed.error,
    });
  }
  return { ...agentBudget, ...definedLimits(parsed.data) };
}

function definedLimits(budget: Budget): Budget {
  return Object.fromEntries(Object.entries(budget).filter(([, value]) => value !== undefined));
}
