// The approval of one tool call, asked the same way by the tools pattern, the code-action bridge and
// the call gate of durable runs: a hook that throws denies the call (fails closed), with one sentence.
import type { ApprovalDecision, ApprovalHook, ApprovalRequest } from "../types.ts";

/**
 * The hook's decision for `request`; a hook that throws becomes a denial that says so. What the
 * decision means (approve, deny, "interrupt") is the caller's to read: `denialOf` for the first two.
 */
export async function askApproval(hook: ApprovalHook, request: ApprovalRequest): Promise<ApprovalDecision> {
  try {
    return await hook(request);
  } catch (error) {
    const message = error instanceof Error ? error.message || error.name : String(error);
    return {
      approved: false,
      reason: `the approval hook failed, so the call to ${request.tool} was not made: ${message}`,
    };
  }
}

/**
 * Undefined when `decision` approves, else the reason the program or the model is given. Only `true`
 * and `{ approved: true }` approve: anything else (an "interrupt" the caller does not handle too) denies.
 */
export function denialOf(tool: string, decision: ApprovalDecision): string | undefined {
  if (decision === true) return undefined;
  if (typeof decision === "object" && decision !== null) {
    if ("approved" in decision && decision.approved === true) return undefined;
    if (typeof decision.reason === "string" && decision.reason !== "") return decision.reason;
  }
  return `the call to ${tool} was not approved`;
}
