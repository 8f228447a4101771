import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildAgent, ConfigError, recordRun, replayRun, StepLimitError } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import type { AgentEvent } from "../src/types.ts";
import { createLoadOrders, programReply, runFixtureProcess, withAgent } from "./helpers.ts";

// Steps (codeAction.maxSteps): several programs over one live interpreter in one run, against
// real containers; the model is scripted and its requests are read back.

const question =
  "What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price.";

const step1 = `
orders = load_orders()
print("columns:", sorted(orders[0].keys()))
print("rows:", len(orders))
`;
const step2 = `
from datetime import date
revenue = {}
for row in orders:
    day = date.fromisoformat(row["date"])
    if date(2026, 7, 1) <= day <= date(2026, 9, 30):
        revenue[row["region"]] = revenue.get(row["region"], 0) + row["quantity"] * row["unit_price"]
print({region: round(total, 2) for region, total in sorted(revenue.items())})
`;
const step3 = `
import json
print("RESULT: " + json.dumps(sorted(((r, round(v, 2)) for r, v in revenue.items()), key=lambda x: -x[1])))
`;

const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

/** The text of the last message of the model's `index`th request. */
function lastMessageOf(model: ScriptedChatModel, index: number): string {
  const messages = model.calls[index]!.messages;
  return String(messages.at(-1)!.content);
}

describe("steps: several programs over one live interpreter (real containers)", () => {
  it("a 3-step run: rows loaded once, revenue computed into a variable, the RESULT printed from it", async () => {
    const { loadOrders, calls } = createLoadOrders();
    const model = new ScriptedChatModel([programReply(step1), programReply(step2), programReply(step3)]);
    const events: AgentEvent[] = [];
    const result = await withAgent(
      { model, pattern: "code-action", extraTools: [loadOrders], codeAction: { maxSteps: 3 } },
      async (agent) => {
        for await (const event of await agent.stream(ask(question))) events.push(event);
        return (events.at(-1) as Extract<AgentEvent, { type: "answer" }>).result;
      },
    );
    expect(result.answer).toBe(
      '[["North America", 108664], ["LATAM", 81328], ["EMEA", 77689], ["APAC", 65023]]',
    );
    // load_orders ran once, on the host, for the three programs.
    expect(calls.count).toBe(1);
    expect(result.attempts.map((attempt) => [attempt.step, attempt.status])).toEqual([
      [1, "no-result"],
      [2, "no-result"],
      [3, "ok"],
    ]);
    // The first request says how steps work; the second and third carry the steps' output and what the interpreter holds.
    expect(String(model.calls[0]!.messages[0]!.content)).toContain("SAME live Python interpreter");
    const second = lastMessageOf(model, 1);
    expect(second).toContain("Step 1 ran");
    expect(second).toContain("rows: 500");
    expect(second).toMatch(/orders: list len 500/);
    const third = lastMessageOf(model, 2);
    expect(third).toContain("Step 2 ran");
    expect(third).toContain("'APAC': 65023");
    expect(third).toMatch(/revenue: dict len 4 keys/);
    expect(third).toContain("This is the last step");
    // One container for the three programs: the program-start events name their steps.
    const starts = events.filter((event) => event.type === "program-start");
    expect(starts.map((event) => (event as { step?: number }).step)).toEqual([1, 2, 3]);
  });

  it("replayRun reproduces a 3-step run in one interpreter, every call from the log; a changed step differs", async () => {
    const { loadOrders, calls } = createLoadOrders();
    const model = new ScriptedChatModel([programReply(step1), programReply(step2), programReply(step3)]);
    const { record, tools } = await withAgent(
      { model, pattern: "code-action", extraTools: [loadOrders], codeAction: { maxSteps: 3 } },
      async (agent) => ({
        record: recordRun(await agent.invoke(ask(question)), agent.tools),
        tools: agent.tools,
      }),
    );
    expect(tools.map((tool) => tool.name)).toEqual(["load_orders"]);
    expect(record.steps?.map((entry) => entry.program)).toEqual(
      [step1, step2].map((program) => program.trim()),
    );
    const replayed = await replayRun(record);
    expect(replayed).toMatchObject({ status: "reproduced", result: record.result });
    expect(calls.count).toBe(1);
    const changed = {
      ...record,
      steps: [record.steps![0]!, { ...record.steps![1]!, program: "revenue = {}\nprint(1)" }],
    };
    expect(await replayRun(changed)).toMatchObject({ status: "differs", kind: "result" });
  });

  it("with maxSteps 1 the prompt is the same as without steps", async () => {
    const prompts: string[] = [];
    for (const codeAction of [undefined, { maxSteps: 1 }]) {
      const model = new ScriptedChatModel([programReply('print("RESULT: 1")')]);
      await withAgent({ model, pattern: "code-action", ...(codeAction ? { codeAction } : {}) }, (agent) =>
        agent.invoke(ask("one?")),
      );
      prompts.push(model.calls[0]!.messages.map((message) => String(message.content)).join("\n---\n"));
    }
    expect(prompts[1]).toBe(prompts[0]);
    expect(prompts[0]).not.toContain("live Python interpreter");
  });

  it("a failed step is repaired in the same interpreter: what it set before the error is there", async () => {
    const model = new ScriptedChatModel([
      programReply("base = 40\nprint('base set')"),
      programReply("partial = base + 1\nraise ValueError('not yet')"),
      programReply("print('RESULT:', partial + 1)"),
    ]);
    const result = await withAgent(
      { model, pattern: "code-action", codeAction: { maxSteps: 3, maxRepairs: 1 } },
      (agent) => agent.invoke(ask("count")),
    );
    expect(result.answer).toBe("42");
    expect(result.attempts.map((attempt) => [attempt.step, attempt.status])).toEqual([
      [1, "no-result"],
      [2, "error"],
      [2, "ok"],
    ]);
    expect(lastMessageOf(model, 2)).toContain("ValueError: not yet");
  });

  it("past maxSteps: a StepLimitError with every step's program and output", async () => {
    const model = new ScriptedChatModel([programReply("print('one')"), programReply("print('two')")]);
    const error = await withAgent({ model, pattern: "code-action", codeAction: { maxSteps: 2 } }, (agent) =>
      agent.invoke(ask("never answers")).catch((caught: unknown) => caught),
    );
    expect(StepLimitError.isInstance(error)).toBe(true);
    const steps = (error as StepLimitError).steps;
    expect(steps.map((step) => [step.step, step.program, step.stdout])).toEqual([
      [1, "print('one')", "one\n"],
      [2, "print('two')", "two\n"],
    ]);
  });

  it("a step that times out loses the interpreter; the next step's interpreter is restored from the history", async () => {
    const { loadOrders, calls } = createLoadOrders();
    const model = new ScriptedChatModel([
      programReply("orders = load_orders()\ncount = len(orders)\nprint(count)"),
      programReply("import time\ntime.sleep(60)"),
      programReply("print('RESULT:', count)"),
    ]);
    const result = await withAgent(
      {
        model,
        pattern: "code-action",
        extraTools: [loadOrders],
        codeAction: { maxSteps: 3, execTimeout: 2 },
      },
      (agent) => agent.invoke(ask("how many orders?")),
    );
    expect(result.answer).toBe("500");
    expect(result.attempts.map((attempt) => attempt.status)).toEqual(["no-result", "timeout", "ok"]);
    // The restored interpreter re-executed step 1 with its call answered from the log.
    expect(calls.count).toBe(1);
  });

  it("samples with steps are refused, naming both", async () => {
    const model = new ScriptedChatModel([]);
    const error = await buildAgent({
      model,
      pattern: "code-action",
      codeAction: { samples: 3, maxSteps: 2 },
    }).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/samples: 3 cannot be combined with codeAction.maxSteps: 2/);
  });

  it("an interrupt in step 2 is resumed in another process: step 1 re-executed from its log, each tool called once", async () => {
    const folder = await mkdtemp(join(tmpdir(), "codeaction-steps-resume-"));
    try {
      const stateFile = join(folder, "state.json");
      const started = await runResumeProcess("start", stateFile, [
        'a = count_a()\nprint("a is", a)',
        'b = approve_me()\nprint("b is", b)',
      ]);
      expect(started).toMatchObject({
        status: "interrupted",
        calls: { count_a: 1, approve_me: 0 },
        modelCalls: 2,
      });
      const resumed = await runResumeProcess("resume", stateFile, ['print("RESULT:", a + b)']);
      // Step 1's count_a was answered from the state's log; approve_me ran once, now approved.
      expect(resumed).toMatchObject({
        status: "answered",
        answer: "42",
        calls: { count_a: 0, approve_me: 1 },
      });
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

const resumeProcess = fileURLToPath(new URL("./fixtures/steps-resume-process.ts", import.meta.url));

/** One process of steps-resume-process.ts: its JSON line. */
function runResumeProcess(mode: "start" | "resume", stateFile: string, programs: string[]): Promise<unknown> {
  return runFixtureProcess(resumeProcess, [mode, stateFile, ...programs]);
}
