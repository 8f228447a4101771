import { z } from "zod";
import { type Budget, budgetSchema, type Pricing, pricingSchema } from "../budget/usage.ts";
import { ConfigError } from "../errors/config-error.ts";
import type { ObserveOptions } from "./run-observer.ts";

/** buildAgent's observability options: budget, pricing, tracing. */
export type ObserveBuildOptions = {
  /**
   * Per-run limits (each invoke; `configurable.budget` overrides them per call). The run stops before
   * the model call that would go past maxModelCalls, maxTokens or maxCostUsd, or at maxWallSeconds,
   * kills its program, and rejects with a BudgetExceededError carrying the usage so far.
   */
  budget?: Budget;
  /** Prices per million tokens by model name, for `result.usage.costUsd` and `budget.maxCostUsd`. None is built in. */
  pricing?: Pricing;
  /**
   * OpenTelemetry spans (through @opentelemetry/api, when an SDK is registered): `recordContent`
   * adds programs, tool arguments and results to them (default false), each cut to
   * `maxContentChars` (default 4000).
   */
  tracing?: { recordContent?: boolean; maxContentChars?: number };
};

export const observeOptionsShape = {
  budget: budgetSchema.optional(),
  pricing: pricingSchema.optional(),
  tracing: z
    .strictObject({
      recordContent: z.boolean().optional(),
      maxContentChars: z.number().int().min(16).max(1_000_000).optional(),
    })
    .optional(),
};

/** The parsed options' observability part, as the agent keeps it. */
export function observeOptionsOf(options: ObserveBuildOptions): ObserveOptions {
  return {
    ...(options.budget ? { budget: options.budget } : {}),
    ...(options.pricing ? { pricing: options.pricing } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  };
}

/** A cost limit needs prices: refused when the agent is built, before anything starts. */
export function refuseUnpricedBudget(options: ObserveBuildOptions): void {
  if (options.budget?.maxCostUsd === undefined || options.pricing) return;
  throw new ConfigError({
    message:
      "buildAgent: budget.maxCostUsd needs prices, and none is built in. Pass pricing: { '<model>': { inputPerMTok, outputPerMTok } }, or remove maxCostUsd.",
  });
}
