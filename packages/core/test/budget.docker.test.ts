import { describe, expect, test } from "vitest";
import { BudgetExceededError, buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { containersOfThisProcess, programReply } from "./helpers.ts";

// Budgets of code-action runs against the real engine: each limit stops the run at the right
// point, the program is killed, no container is left, and the error carries the usage so far.

const failing = {
  content: programReply("raise SystemExit(3)"),
  usage: { inputTokens: 100, outputTokens: 20 },
};
const answering = {
  content: programReply('print("RESULT: 42")'),
  usage: { inputTokens: 150, outputTokens: 30 },
};

async function budgetErrorOf(run: Promise<unknown>): Promise<BudgetExceededError> {
  const error = await run.catch((thrown: unknown) => thrown);
  expect(BudgetExceededError.isInstance(error), String(error)).toBe(true);
  return error as BudgetExceededError;
}

describe("budgets of code-action runs (real engine)", () => {
  test("maxWallSeconds: a program still running at the limit is killed, its container removed", async () => {
    const model = new ScriptedChatModel([
      programReply(
        'import time\nopen("/workspace/started", "w").close()\ntime.sleep(600)\nprint("RESULT: late")',
      ),
    ]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      budget: { maxWallSeconds: 8 },
    });
    const stream = await agent.stream("sleep");
    const events: string[] = [];
    const error = await budgetErrorOf(
      (async () => {
        for await (const event of stream) events.push(event.type);
      })(),
    );
    expect(error).toMatchObject({ limit: "maxWallSeconds", budget: 8 });
    expect(error.elapsedSeconds).toBeGreaterThanOrEqual(8);
    expect(error.usage).toMatchObject({ modelCalls: 1, attempts: 1 });
    // The program stopped at the limit had its time in the sandbox: it counts.
    expect(error.usage.sandboxSeconds).toBeGreaterThan(0);
    expect(events).toContain("program-start");
    expect(containersOfThisProcess()).toEqual([]);
  });

  test("maxModelCalls: the repair's model call is not made; the failed attempt's sandbox time is counted", async () => {
    const model = new ScriptedChatModel([failing, answering]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      budget: { maxModelCalls: 1 },
    });
    const error = await budgetErrorOf(agent.invoke("42?"));
    expect(error).toMatchObject({ limit: "maxModelCalls", budget: 1 });
    expect(model.calls).toHaveLength(1);
    expect(error.usage).toMatchObject({ modelCalls: 1, attempts: 2, inputTokens: 100, outputTokens: 20 });
    expect(error.usage.sandboxSeconds).toBeGreaterThan(0);
    expect(containersOfThisProcess()).toEqual([]);
  });

  test("maxTokens: the repair that goes past the limit does not run its program", async () => {
    const model = new ScriptedChatModel([failing, answering]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      budget: { maxTokens: 200 },
    });
    const stream = await agent.stream("42?");
    const programStarts: number[] = [];
    const error = await budgetErrorOf(
      (async () => {
        for await (const event of stream)
          if (event.type === "program-start") programStarts.push(event.attempt);
      })(),
    );
    expect(error).toMatchObject({ limit: "maxTokens", budget: 200 });
    expect(error.usage).toMatchObject({ totalTokens: 300, modelCalls: 2 });
    // The second reply pushed the run past 200 tokens: its program never started.
    expect(programStarts).toEqual([1]);
    expect(containersOfThisProcess()).toEqual([]);
  });

  test("maxCostUsd, and exact usage and cost of a run that answers within its budget", async () => {
    const pricing = { scripted: { inputPerMTok: 10, outputPerMTok: 100 } };
    const model = new ScriptedChatModel([failing, answering]);
    await using agent = await buildAgent({ model, pattern: "code-action", sandbox: { pool: 0 }, pricing });
    const result = await agent.invoke("42?");
    expect(result.answer).toBe("42");
    const { sandboxSeconds, ...figures } = result.usage;
    expect(figures).toEqual({
      inputTokens: 250,
      outputTokens: 50,
      totalTokens: 300,
      modelCalls: 2,
      toolCalls: 0,
      attempts: 2,
      costUsd: (250 * 10 + 50 * 100) / 1e6,
    });
    expect(sandboxSeconds).toBeGreaterThan(0);
    // The answer does not wait for its containers' removal; close() does.
    await agent.close();
    // $0.003 for the first reply: a limit of $0.002 stops the run before its program runs.
    await using limited = await buildAgent({
      model: new ScriptedChatModel([failing]),
      pattern: "code-action",
      sandbox: { pool: 0 },
      pricing,
    });
    const error = await budgetErrorOf(
      limited.invoke("42?", { configurable: { budget: { maxCostUsd: 0.002 } } }),
    );
    expect(error).toMatchObject({ limit: "maxCostUsd", budget: 0.002 });
    expect(error.usage).toMatchObject({ costUsd: 0.003, modelCalls: 1, sandboxSeconds: 0 });
    expect(containersOfThisProcess()).toEqual([]);
  });
});
