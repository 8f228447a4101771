import { describe, expect, it } from "vitest";
import { type Agent, type BuildAgentOptions, buildAgent, DisagreementError } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import type { AgentEvent } from "../src/types.ts";
import { programReply } from "./helpers.ts";

// Seed 000's savings question and two correct programs that print the answer differently.
const savingsQuestion =
  "A savings account starts at $2,500. Each month it earns 0.35% interest on the balance, " +
  "then the owner deposits $180. After the 3rd, 9th and 15th deposit the owner also " +
  "withdraws $400. What is the balance after 24 months, to the cent?";

const decimalProgram = `
import json
from decimal import Decimal

balance = Decimal("2500")
for month in range(1, 25):
    balance += balance * Decimal("0.0035")
    balance += Decimal("180")
    if month in (3, 9, 15):
        balance -= Decimal("400")
print("RESULT: " + json.dumps(str(balance.quantize(Decimal("0.01")))))
`;

const floatProgram = `
balance = 2500.0
for month in range(1, 25):
    balance += balance * 0.0035
    balance += 180
    if month in (3, 9, 15):
        balance -= 400
print(f"RESULT: {round(balance, 2)}")
`;

// Off by one: 25 months instead of 24, a plausible misreading.
const wrongProgram = `
balance = 2500.0
for month in range(1, 26):
    balance += balance * 0.0035
    balance += 180
    if month in (3, 9, 15):
        balance -= 400
print(f"RESULT: {round(balance, 2)}")
`;

async function withAgent<T>(options: BuildAgentOptions, body: (agent: Agent) => Promise<T>): Promise<T> {
  const agent = await buildAgent(options);
  try {
    return await body(agent);
  } finally {
    await agent.close();
  }
}

const ask = { messages: [{ role: "user" as const, content: savingsQuestion }] };

describe("the agreement check (real containers)", () => {
  it('accepts two programs that agree once normalized (5952.35 and "5952.35"), running them concurrently', async () => {
    const model = new ScriptedChatModel([programReply(floatProgram), programReply(decimalProgram)]);
    const events: AgentEvent[] = [];
    const result = await withAgent(
      { model, pattern: "code-action", codeAction: { samples: 2 } },
      async (agent) => {
        for await (const event of await agent.stream(ask)) events.push(event);
        const last = events.at(-1);
        if (last?.type !== "answer") throw new Error("the stream did not end with an answer");
        return last.result;
      },
    );
    expect(result.status).toBe("answered");
    expect(result.answer).toBe("5952.35");
    expect(model.calls).toHaveLength(2);
    expect(result.attempts.map((attempt) => [attempt.sample, attempt.result]).sort()).toEqual([
      [1, "5952.35"],
      [2, '"5952.35"'],
    ]);
    // Both programs started before either ended: the samples ran at the same time.
    const order = events
      .filter((event) => event.type === "program-start" || event.type === "program-end")
      .map((event) => event.type);
    expect(order.slice(0, 2)).toEqual(["program-start", "program-start"]);
    // The money rule is in the prompt.
    expect(String(model.calls[0]?.messages[0]?.content)).toContain("decimal.Decimal for money");
  });

  it("rejects with DisagreementError holding both runs when two programs disagree", async () => {
    const model = new ScriptedChatModel([programReply(floatProgram), programReply(wrongProgram)]);
    const error = await withAgent({ model, pattern: "code-action", codeAction: { samples: 2 } }, (agent) =>
      agent.invoke(ask),
    ).catch((caught: unknown) => caught);
    expect(DisagreementError.isInstance(error)).toBe(true);
    expect((error as DisagreementError).status).toBe("disagree");
    const samples = (error as DisagreementError).samples;
    expect(samples).toHaveLength(2);
    expect(samples.map((sample) => sample.answer).sort()).toEqual(
      ["5952.35", expect.stringMatching(/^\d+\.\d+$/)].sort(),
    );
    expect(samples.every((sample) => sample.attempts[0]?.program)).toBe(true);
    expect(new Set(samples.map((sample) => sample.normalizedAnswer)).size).toBe(2);
  });

  it("escalates when every attempt failed, even with one sample, and shows the stronger model the failures", async () => {
    const model = new ScriptedChatModel([
      programReply("raise ValueError('rate unknown')"),
      programReply("print('no result line')"),
    ]);
    const stronger = new ScriptedChatModel([programReply(decimalProgram)]);
    const result = await withAgent(
      { model, pattern: "code-action", codeAction: { maxRepairs: 1, escalate: { model: stronger } } },
      (agent) => agent.invoke(ask),
    );
    expect(result.status).toBe("escalated");
    expect(result.answer).toBe('"5952.35"');
    expect(result.attempts.map((attempt) => [attempt.status, attempt.escalated ?? false])).toEqual([
      ["error", false],
      ["no-result", false],
      ["ok", true],
    ]);
    expect(stronger.calls).toHaveLength(1);
    const shown = String(stronger.calls[0]?.messages.at(-1)?.content);
    expect(shown).toContain(savingsQuestion);
    // The sample's last program and why it failed.
    expect(shown).toContain("print('no result line')");
    expect(shown).toMatch(/It failed: .*RESULT/);
  });

  it("lets the escalation model decide a disagreement", async () => {
    const model = new ScriptedChatModel([programReply(floatProgram), programReply(wrongProgram)]);
    const stronger = new ScriptedChatModel([programReply(decimalProgram)]);
    const result = await withAgent(
      { model, pattern: "code-action", codeAction: { samples: 2, escalate: { model: stronger } } },
      (agent) => agent.invoke(ask),
    );
    expect(result.status).toBe("escalated");
    expect(result.answer).toBe('"5952.35"');
    expect(result.attempts.filter((attempt) => attempt.escalated)).toHaveLength(1);
    const shown = String(stronger.calls[0]?.messages.at(-1)?.content);
    expect(shown).toContain(savingsQuestion);
    expect(shown).toContain("for month in range(1, 26):");
    expect(shown).toContain("It answered: 5952.35");
  });

  it("takes the majority of three samples", async () => {
    const model = new ScriptedChatModel([
      programReply(wrongProgram),
      programReply(floatProgram),
      programReply(decimalProgram),
    ]);
    const result = await withAgent({ model, pattern: "code-action", codeAction: { samples: 3 } }, (agent) =>
      agent.invoke(ask),
    );
    expect(result.status).toBe("answered");
    expect(["5952.35", '"5952.35"']).toContain(result.answer);
    expect(result.attempts).toHaveLength(3);
  });
});
