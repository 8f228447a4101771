import { describe, expect, it } from "vitest";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { type RunState, signState, verifyState } from "./run-state.ts";

const secret = "a-resume-secret-of-32-characters";

function sampleState(): Omit<RunState, "signature"> {
  return {
    format: "codeaction.run-state",
    version: 1,
    runId: "run_1",
    seed: "run_1",
    messages: [{ role: "user", content: "Charge Ada." }],
    modelMessages: [{ role: "system", content: "..." }],
    attempt: { number: 1, program: "charge_card(amount=1)", modelReply: "```python\n...```" },
    callLog: [],
    pending: { sequence: 1, tool: "charge_card", args: { amount: 1 } },
    settings: { execTimeout: 120, maxToolCalls: 50, maxRepairs: 1 },
    tools: { names: ["charge_card"], digest: "0".repeat(64) },
  };
}

function refusal(run: () => unknown): ResumeStateError["reason"] | "accepted" {
  try {
    run();
    return "accepted";
  } catch (error) {
    if (!ResumeStateError.isInstance(error)) throw error;
    return error.reason;
  }
}

describe("a run state's signature", () => {
  it("is accepted under its key, and the same content with its keys in another order", () => {
    const state = signState(sampleState(), secret);
    expect(state.signature).toMatch(/^[0-9a-f]{64}$/);
    const reordered = Object.fromEntries(Object.entries(state).reverse());
    expect(refusal(() => verifyState(JSON.parse(JSON.stringify(reordered)), { secret }))).toBe("accepted");
  });

  it("refuses a changed state, another key, a missing signature, and no key unless told to trust it", () => {
    const state = signState(sampleState(), secret);
    const changed = { ...state, pending: { ...state.pending, args: { amount: 1000 } } };
    expect(refusal(() => verifyState(changed, { secret }))).toBe("bad-signature");
    expect(refusal(() => verifyState(state, { secret: `${secret}-other` }))).toBe("bad-signature");
    const unsigned = signState(sampleState(), undefined);
    expect(unsigned.signature).toBeUndefined();
    expect(refusal(() => verifyState(unsigned, { secret }))).toBe("unsigned");
    expect(refusal(() => verifyState(unsigned, { secret: undefined }))).toBe("no-secret");
    expect(refusal(() => verifyState(unsigned, { secret: undefined, trustUnsigned: true }))).toBe("accepted");
    expect(refusal(() => verifyState({ format: "other" }, { secret }))).toBe("malformed");
  });
});
