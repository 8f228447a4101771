import { z } from "zod";

/** What one run used, summed over every model call, program and tool call (`result.usage`). */
export type RunUsage = {
  /** Input tokens, from the models' `usage_metadata`; undefined when no model call reported any. */
  inputTokens?: number;
  /** Output tokens; undefined when no model call reported any. */
  outputTokens?: number;
  /** Input plus output tokens; undefined when no model call reported any. */
  totalTokens?: number;
  /** Model calls made (every attempt, repair, sample and escalation; every tools-pattern turn). */
  modelCalls: number;
  /** Tool calls a program or the model asked for, refused ones included. */
  toolCalls: number;
  /** Code-action: programs the model wrote (attempts), a reply with no program included. */
  attempts: number;
  /** Seconds programs ran in the sandbox (code-action), summed over attempts. */
  sandboxSeconds: number;
  /** With `pricing`: what the tokens cost, in US dollars; undefined when a call's price or tokens are unknown. */
  costUsd?: number;
};

/** A model's price per million tokens, in US dollars. */
export type ModelPrice = { inputPerMTok: number; outputPerMTok: number };

/** Prices by model name, as the model reports it (`gpt-5-mini`) or as given (`openai:gpt-5-mini`). None is built in. */
export type Pricing = Record<string, ModelPrice>;

/** The limits a budget can set. */
export type BudgetLimit = "maxTokens" | "maxModelCalls" | "maxCostUsd" | "maxWallSeconds";

/** Per-run limits; the run stops with a BudgetExceededError before going past one. */
export type Budget = Partial<Record<BudgetLimit, number>>;

export const budgetSchema = z.strictObject({
  maxTokens: z.number().int().positive().optional(),
  maxModelCalls: z.number().int().positive().optional(),
  maxCostUsd: z.number().positive().optional(),
  maxWallSeconds: z
    .number()
    .positive()
    .max(86_400 * 7)
    .optional(),
});

export const pricingSchema = z.record(
  z.string().min(1),
  z.strictObject({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0) }),
);

/** The token counts of one model reply. */
export type CallTokens = { inputTokens?: number; outputTokens?: number; totalTokens?: number };

/** Running totals of one run: what `result.usage` and the budget checks read. */
export class UsageMeter {
  readonly #pricing: Pricing | undefined;
  #usage: RunUsage = { modelCalls: 0, toolCalls: 0, attempts: 0, sandboxSeconds: 0 };
  /** False once a call's tokens or price were unknown: the cost is then unknown too. */
  #costKnown = true;
  #costUsd = 0;

  constructor(pricing: Pricing | undefined) {
    this.#pricing = pricing;
  }

  /** One model call's reply: its tokens (when it reported any) and their price. */
  addModelCall(models: string[], tokens: CallTokens | undefined): void {
    const usage = this.#usage;
    usage.modelCalls += 1;
    for (const key of ["inputTokens", "outputTokens", "totalTokens"] as const) {
      const value = tokens?.[key];
      if (typeof value === "number") usage[key] = (usage[key] ?? 0) + value;
    }
    const price = priceOf(this.#pricing, models);
    if (!price || tokens?.inputTokens === undefined || tokens.outputTokens === undefined) {
      this.#costKnown = false;
      return;
    }
    this.#costUsd +=
      (tokens.inputTokens * price.inputPerMTok + tokens.outputTokens * price.outputPerMTok) / 1e6;
  }

  addAttempt(): void {
    this.#usage.attempts += 1;
  }

  addToolCall(): void {
    this.#usage.toolCalls += 1;
  }

  addSandboxTime(milliseconds: number): void {
    this.#usage.sandboxSeconds += milliseconds / 1000;
  }

  /** Whether `pricing` has a price for one of these names. */
  priced(models: string[]): boolean {
    return priceOf(this.#pricing, models) !== undefined;
  }

  /** A copy of the totals; `costUsd` only with pricing and every call's tokens and price known. */
  snapshot(): RunUsage {
    const usage = { ...this.#usage, sandboxSeconds: Math.round(this.#usage.sandboxSeconds * 1000) / 1000 };
    if (this.#pricing && this.#costKnown && usage.modelCalls > 0) usage.costUsd = this.#costUsd;
    return usage;
  }
}

function priceOf(pricing: Pricing | undefined, models: string[]): ModelPrice | undefined {
  if (!pricing) return undefined;
  for (const model of models) {
    const price = pricing[model];
    if (price) return price;
  }
  return undefined;
}
