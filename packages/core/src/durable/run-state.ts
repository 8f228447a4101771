import { timingSafeEqual } from "node:crypto";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import type { CallLogEntry } from "./call-log.ts";
import { canonicalJson, hmacHex, sha256Hex } from "./canonical-json.ts";
import type { HistoryEntry } from "./history.ts";

/** The call an approval hook answered "interrupt" for: not made; it gets the decision on resume. */
export type PendingCall = {
  /** Its place in the run's call log. */
  sequence: number;
  tool: string;
  args: unknown;
  /** The reason the hook gave with its "interrupt", if any. */
  reason?: string;
};

/**
 * What `agent.resume()` gives the pending call: approve (true), deny (false), or deny with a reason.
 * With `call`, the decision is bound to the call it was made about: resume refuses a state whose
 * signed pending call is another tool or has other arguments (`argsDigest`: `pendingArgsDigest()`).
 */
export type ResumeDecision =
  | boolean
  | { approved: boolean; reason?: string; call?: { tool: string; argsDigest: string } };

/** A message of the turn, as text: what the model saw and wrote. */
export type StateMessage = { role: "system" | "user" | "assistant"; content: string };

/**
 * An interrupted code-action run, as plain JSON: store it anywhere, resume it with `agent.resume()`
 * in any process. Signed (HMAC-SHA256 over its canonical JSON) with the agent's `resumeSecret`.
 */
export type RunState = {
  format: "codeaction.run-state";
  version: 1;
  runId: string;
  /** Random, signed: what names this state when it is recorded as used (a state is resumed once). */
  nonce?: string;
  /** The seed of the program's `random` module (the same on resume). */
  seed: string;
  /** The conversation the turn was asked (the result's `messages` start with it). */
  messages: StateMessage[];
  /** The interrupted sample's messages to the model, up to the reply that held the program. */
  modelMessages: StateMessage[];
  /** The interrupted attempt: its program, the reply it came from, and where it stands in its sample. */
  attempt: { number: number; sample?: number; escalated?: boolean; program: string; modelReply: string };
  /** Every call the program made before the pending one, with how it ended. */
  callLog: CallLogEntry[];
  pending: PendingCall;
  /** The run's settings when it was interrupted, for the record: a resumed run uses the resuming agent's own. */
  settings: { execTimeout: number; maxToolCalls: number; maxRepairs: number; maxResultBytes?: number };
  /** The tools the program was written against: their names, and the digest of their stubs. */
  tools: { names: string[]; digest: string };
  /**
   * With steps: the interrupted step, and the programs that ran before it in the run's interpreter
   * (with their call logs): a resumed run re-executes them first, every call answered from its log.
   */
  steps?: { step: number; seed: string; history: HistoryEntry[] };
  /** HMAC-SHA256 (hex) of the state's canonical JSON without this field; absent when unsigned. */
  signature?: string;
};

const minimumSecretBytes = 16;
const signatureHexPattern = /^[0-9a-f]{64}$/;

/** The SHA-256 digest of a pending call's canonical arguments (keys sorted), as the call log has it. */
export function pendingArgsDigest(pending: Pick<PendingCall, "args">): string {
  return sha256Hex(canonicalJson(pending.args ?? {}));
}

/**
 * Refuses a decision bound to another call than the state's signed pending one (its tool, or the
 * digest of its arguments). A decision without `call` is not bound.
 */
export function checkDecisionFits(state: RunState, decision: ResumeDecision): void {
  if (typeof decision !== "object" || decision.call === undefined) return;
  const digest = pendingArgsDigest(state.pending);
  if (decision.call.tool === state.pending.tool && decision.call.argsDigest === digest) return;
  throw new ResumeStateError({
    reason: "decision-mismatch",
    message: `resume refused: the decision was made about ${decision.call.tool} (arguments ${decision.call.argsDigest.slice(0, 16)}…), but run ${state.runId}'s signed state waits on ${state.pending.tool} (arguments ${digest.slice(0, 16)}…). Show the state's pending call to whoever decides, and decide again.`,
  });
}

/** A resume secret as key bytes; a short or empty one is refused (a ConfigError is the caller's). */
export function checkResumeSecret(secret: string | Uint8Array): string | undefined {
  const bytes = typeof secret === "string" ? Buffer.byteLength(secret) : secret.byteLength;
  if (bytes >= minimumSecretBytes) return undefined;
  return `resumeSecret must be at least ${minimumSecretBytes} bytes (it is ${bytes}); use a random key of 32 bytes, e.g. \`openssl rand -hex 32\``;
}

/** The state with its signature (HMAC-SHA256 over its canonical JSON), or unsigned without a secret. */
export function signState(
  state: Omit<RunState, "signature">,
  secret: string | Uint8Array | undefined,
): RunState {
  const { signature: _old, ...content } = state as RunState;
  if (secret === undefined) return content;
  return { ...content, signature: hmacHex(secret, canonicalJson(content)) };
}

/**
 * Checks a state that came back from storage, before anything starts: its shape, then its signature
 * under `secret`. Without a secret the state is refused unless `trustUnsigned` (the caller's
 * explicit opt-out). Throws a ResumeStateError naming the cause and the fix.
 */
export function verifyState(
  input: unknown,
  options: { secret: string | Uint8Array | undefined; trustUnsigned?: boolean },
): RunState {
  const state = checkShape(input);
  const { secret } = options;
  if (secret === undefined) {
    if (options.trustUnsigned === true) return state;
    throw new ResumeStateError({
      reason: "no-secret",
      message:
        "resume refused: this agent has no resumeSecret, so it cannot check that the state is one it wrote (a forged state can make the program believe any tool result). Build the agent with buildAgent({ resumeSecret }) (the CLI reads CODEACTION_RESUME_SECRET), or pass { trustUnsignedState: true } to resume() if the state never left your control.",
    });
  }
  if (typeof state.signature !== "string") {
    throw new ResumeStateError({
      reason: "unsigned",
      message:
        "resume refused: the state carries no signature. It was written by an agent without resumeSecret; resume it with { trustUnsignedState: true } only if it never left your control.",
    });
  }
  const { signature, ...content } = state;
  const expected = Buffer.from(hmacHex(secret, canonicalJson(content)), "hex");
  // Strict: exactly 64 lowercase hex digits (Buffer.from(…, "hex") stops at the first other character).
  const given = Buffer.from(signatureHexPattern.test(signature) ? signature : "", "hex");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ResumeStateError({
      reason: "bad-signature",
      message:
        "resume refused: the state's signature does not match its content under this agent's resumeSecret. The state was changed after it was written, or it was signed with another key; nothing was started.",
    });
  }
  return state;
}

function checkShape(input: unknown): RunState {
  const state = input as Partial<RunState> | null;
  const problems: string[] = [];
  if (typeof state !== "object" || state === null || Array.isArray(state))
    problems.push("it is not an object");
  else {
    if (state.format !== "codeaction.run-state") problems.push('format is not "codeaction.run-state"');
    if (state.version !== 1) problems.push(`version ${JSON.stringify(state.version)} is not 1`);
    if (typeof state.runId !== "string") problems.push("runId is missing");
    if (typeof state.attempt?.program !== "string") problems.push("attempt.program is missing");
    if (!Array.isArray(state.callLog)) problems.push("callLog is not a list");
    if (typeof state.pending?.tool !== "string" || typeof state.pending.sequence !== "number")
      problems.push("pending is missing");
    if (!Array.isArray(state.modelMessages) || !Array.isArray(state.messages))
      problems.push("messages are missing");
    if (
      state.steps !== undefined &&
      (typeof state.steps.step !== "number" || !Array.isArray(state.steps.history))
    )
      problems.push("steps is malformed");
  }
  if (problems.length > 0) {
    throw new ResumeStateError({
      reason: "malformed",
      message: `resume refused: this is not a run state this version of codeaction wrote (${problems.join("; ")}). Pass result.interrupt.state as it was returned (JSON.parse of what you stored).`,
    });
  }
  return state as RunState;
}
