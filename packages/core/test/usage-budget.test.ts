import { tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { BudgetExceededError, buildAgent, ConfigError } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { RunObserver } from "../src/tracing/run-observer.ts";

// Usage, cost and budgets through buildAgent's tools pattern (no sandbox): exact figures from a
// scripted model's usage_metadata, and runs stopped at each limit.

function countingTool() {
  const state = { calls: 0 };
  const lookup = tool(
    async ({ city }: { city: string }) => {
      state.calls += 1;
      return { city, population: 522_000 };
    },
    { name: "lookup_city", description: "Population of a city.", schema: z.object({ city: z.string() }) },
  );
  return { lookup, state };
}

const ask = (usage?: { inputTokens: number; outputTokens: number }) => ({
  toolCalls: [{ name: "lookup_city", args: { city: "Lyon" } }],
  ...(usage ? { usage } : {}),
});

describe("result.usage", () => {
  it("sums the tokens of every model call, counts calls, and prices them with pricing", async () => {
    const { lookup } = countingTool();
    const model = new ScriptedChatModel([
      ask({ inputTokens: 1000, outputTokens: 50 }),
      ask({ inputTokens: 1200, outputTokens: 70 }),
      { content: "About 522,000.", usage: { inputTokens: 1500, outputTokens: 30 } },
    ]);
    await using agent = await buildAgent({
      model,
      extraTools: [lookup],
      pricing: { scripted: { inputPerMTok: 2, outputPerMTok: 8 } },
    });
    const result = await agent.invoke("How many people live in Lyon?");
    expect(result.usage).toEqual({
      inputTokens: 3700,
      outputTokens: 150,
      totalTokens: 3850,
      modelCalls: 3,
      toolCalls: 2,
      attempts: 0,
      sandboxSeconds: 0,
      costUsd: (3700 * 2 + 150 * 8) / 1e6,
    });
  });

  it("leaves tokens and cost undefined (never 0) when the model reports no usage", async () => {
    const { lookup } = countingTool();
    const model = new ScriptedChatModel([ask(), "About 522,000."]);
    await using agent = await buildAgent({
      model,
      extraTools: [lookup],
      pricing: { scripted: { inputPerMTok: 2, outputPerMTok: 8 } },
    });
    const { usage } = await agent.invoke("How many people live in Lyon?");
    expect(usage).toEqual({ modelCalls: 2, toolCalls: 1, attempts: 0, sandboxSeconds: 0 });
    expect("inputTokens" in usage || "costUsd" in usage).toBe(false);
  });
});

describe("budgets", () => {
  it("maxModelCalls: stops before the call past the limit, with the usage so far", async () => {
    const { lookup, state } = countingTool();
    const model = new ScriptedChatModel([ask(), ask(), ask(), "done"]);
    await using agent = await buildAgent({ model, extraTools: [lookup], budget: { maxModelCalls: 2 } });
    const error = await agent.invoke("Lyon?").catch((thrown: unknown) => thrown);
    expect(BudgetExceededError.isInstance(error)).toBe(true);
    const budgetError = error as BudgetExceededError;
    expect(budgetError).toMatchObject({ code: "budget-exceeded", limit: "maxModelCalls", budget: 2 });
    expect(budgetError.usage).toMatchObject({ modelCalls: 2, toolCalls: 2 });
    expect(model.calls).toHaveLength(2);
    expect(state.calls).toBe(2);
  });

  it("maxTokens: the reply that goes past the limit stops the run before its tool calls run", async () => {
    const { lookup, state } = countingTool();
    const model = new ScriptedChatModel([
      ask({ inputTokens: 30, outputTokens: 10 }),
      ask({ inputTokens: 40, outputTokens: 10 }),
      "done",
    ]);
    await using agent = await buildAgent({ model, extraTools: [lookup], budget: { maxTokens: 60 } });
    const error = (await agent.invoke("Lyon?").catch((thrown: unknown) => thrown)) as BudgetExceededError;
    expect(error).toMatchObject({ limit: "maxTokens", budget: 60 });
    expect(error.usage).toMatchObject({ totalTokens: 90, modelCalls: 2, toolCalls: 1 });
    expect(state.calls).toBe(1);
  });

  it("maxCostUsd: stops once the priced tokens pass the limit; needs pricing", async () => {
    const { lookup, state } = countingTool();
    const model = new ScriptedChatModel([ask({ inputTokens: 1_000_000, outputTokens: 0 }), "done"]);
    await using agent = await buildAgent({
      model,
      extraTools: [lookup],
      pricing: { scripted: { inputPerMTok: 3, outputPerMTok: 15 } },
      budget: { maxCostUsd: 2.5 },
    });
    const error = (await agent.invoke("Lyon?").catch((thrown: unknown) => thrown)) as BudgetExceededError;
    expect(error).toMatchObject({ limit: "maxCostUsd", budget: 2.5 });
    expect(error.usage.costUsd).toBe(3);
    expect(state.calls).toBe(0);
    await expect(
      buildAgent({ model, budget: { maxCostUsd: 1 } }).then((built) => built.close()),
    ).rejects.toThrow(/maxCostUsd needs prices/);
  });

  it("a model that reports no tokens cannot be held to maxTokens: the run stops, naming the fix", async () => {
    const { lookup, state } = countingTool();
    const model = new ScriptedChatModel([ask(), "done"]);
    await using agent = await buildAgent({ model, extraTools: [lookup], budget: { maxTokens: 1000 } });
    const error = await agent.invoke("Lyon?").catch((thrown: unknown) => thrown);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/reported no token usage.*'scripted'/);
    expect(state.calls).toBe(0);
  });

  it("configurable.budget overrides the agent's budget for one call, and is checked", async () => {
    const { lookup } = countingTool();
    const model = new ScriptedChatModel([ask(), ask(), "done", ask(), "done"]);
    await using agent = await buildAgent({ model, extraTools: [lookup], budget: { maxModelCalls: 10 } });
    const error = await agent
      .invoke("Lyon?", { configurable: { budget: { maxModelCalls: 1 } } })
      .catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ limit: "maxModelCalls", budget: 1 });
    expect(model.calls).toHaveLength(1);
    await expect(agent.invoke("Lyon?", { configurable: { budget: { maxModelCals: 1 } } })).rejects.toThrow(
      /configurable.budget: .*maxModelCals/,
    );
    // The agent's own budget applies again to the next call.
    expect((await agent.invoke("Lyon?")).usage.modelCalls).toBe(2);
  });
});

describe("sandbox time of a program stopped mid-run", () => {
  it("counts while the program runs, and still counts after it failed without an end", async () => {
    const observer = new RunObserver({ runId: "run-s" });
    const observed = observer.program({ attempt: 1, program: "import time; time.sleep(600)" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const during = observer.usage().sandboxSeconds;
    expect(during).toBeGreaterThan(0);
    observed.fail(new Error("stopped at maxWallSeconds"));
    expect(observer.usage().sandboxSeconds).toBeGreaterThanOrEqual(during);
    observer.finish();
  });
});
