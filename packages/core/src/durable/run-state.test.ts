import { describe, expect, it } from "vitest";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { checkResumable } from "../turn/resume-turn.ts";
import { checkDecisionFits, pendingArgsDigest, type RunState, signState, verifyState } from "./run-state.ts";

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

  it("is parsed strictly: the right signature with characters after it is refused", () => {
    const state = signState(sampleState(), secret);
    // Buffer.from(text, "hex") stops at the first non-hex character, so these decoded to the right bytes.
    for (const tail of ["zz", "!", " ", "0"]) {
      expect(
        refusal(() => verifyState({ ...state, signature: `${state.signature}${tail}` }, { secret })),
      ).toBe("bad-signature");
    }
    expect(
      refusal(() => verifyState({ ...state, signature: state.signature!.toUpperCase() }, { secret })),
    ).toBe("bad-signature");
  });
});

describe("a decision bound to a call", () => {
  it("fits the state's signed pending call only: the same tool and the digest of the same arguments", () => {
    const state = signState(sampleState(), secret);
    const argsDigest = pendingArgsDigest(state.pending);
    const fits = (decision: Parameters<typeof checkDecisionFits>[1]) =>
      refusal(() => checkDecisionFits(state, decision));
    expect(fits(true)).toBe("accepted");
    expect(fits({ approved: true, call: { tool: "charge_card", argsDigest } })).toBe("accepted");
    const other = pendingArgsDigest({ args: { amount: 100000 } });
    expect(fits({ approved: true, call: { tool: "charge_card", argsDigest: other } })).toBe(
      "decision-mismatch",
    );
    expect(fits({ approved: true, call: { tool: "refund", argsDigest } })).toBe("decision-mismatch");
    // The digest is of the canonical arguments: their keys' order does not matter.
    expect(pendingArgsDigest({ args: { b: 1, a: 2 } })).toBe(pendingArgsDigest({ args: { a: 2, b: 1 } }));
  });
});

describe("a state this agent cannot resume", () => {
  const turn = { stubsDigest: "0".repeat(64), toolNames: ["lookup", "charge_card"] };

  it("is refused when a logged result was kept only as its digest, naming the call and the fix", () => {
    const state = signState(sampleState(), secret);
    expect(refusal(() => checkResumable(state, turn))).toBe("accepted");
    const digestOnly = {
      ...state,
      callLog: [
        {
          sequence: 1,
          tool: "lookup",
          argsDigest: "a".repeat(64),
          argsBytes: 2,
          status: "ok" as const,
          resultRef: { sha256: "b".repeat(64), bytes: 2_000_000 },
          durationMs: 1,
        },
      ],
    };
    expect(refusal(() => checkResumable(digestOnly, turn))).toBe("unavailable");
    expect(() => checkResumable(digestOnly, turn)).toThrow(/call 1 \(lookup\).*2000000 bytes.*return less/);
  });

  it("is refused when its program was written against other tools", () => {
    const state = signState(sampleState(), secret);
    expect(refusal(() => checkResumable(state, { ...turn, stubsDigest: "1".repeat(64) }))).toBe("mismatch");
  });
});
