// `codeaction resume`'s checks before anything starts: the journal's chain, the kept state's
// signature and run id, the call it waits on shown, and the decision bound to that call.
import { pendingArgsDigest, type ResumeDecision, type RunState } from "@codeaction/core";
import { verifyChain, verifyState } from "@codeaction/core/durable";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { journalKeyVariable, journalSettings } from "./append.ts";
import type { ReadJournal } from "./read-journal.ts";

/**
 * Refuses a journal whose chain is broken (a record changed, removed, inserted or reordered, or,
 * with CODEACTION_JOURNAL_KEY set, a record without its HMAC): its kept state is not trusted to be
 * the one ask wrote for this run.
 */
export function checkJournalChain(read: ReadJournal, journal: string, env: NodeJS.ProcessEnv): void {
  const { key } = journalSettings(env);
  const verification = verifyChain(read.lines, {
    key,
    rotatedStart: read.files[0]?.rotated ?? false,
    keyName: journalKeyVariable,
  });
  if (!verification.broken) return;
  throw new CliError(
    `codeaction resume refused: the journal ${journal} does not hold as it was written: ${verification.broken.message}. Nothing was resumed: a record edited or planted there could hand this run another state. Check it with codeaction audit verify ${journal}; restore the journal from a copy you trust before resuming.`,
    { code: "journal" },
  );
}

/**
 * The kept state, checked with the resume secret (its signature) and bound to the run named: a
 * state signed for another run (moved into this run's record) is refused.
 */
export function checkKeptState(state: unknown, runId: string, secret: string): RunState {
  const checked = verifyState(state, { secret });
  if (checked.runId !== runId) {
    throw new CliError(
      `codeaction resume refused: the state kept in run ${runId}'s record is signed for run ${checked.runId}, not ${runId}: the record was changed (a state moved from one record to another). Nothing was resumed. Check the journal with codeaction audit verify.`,
      { code: "resume-state" },
    );
  }
  return checked;
}

/**
 * The decision, bound to the signed pending call (its tool and the digest of its arguments), and
 * that call shown on stderr before anything runs.
 */
export function bindDecision(state: RunState, decision: ResumeDecision, context: CliContext): ResumeDecision {
  const { pending } = state;
  const argsDigest = pendingArgsDigest(pending);
  const approved = typeof decision === "boolean" ? decision : decision.approved;
  const call = `${pending.tool} ${JSON.stringify(pending.args)}`;
  context.stderr.write(
    `${escapeForTerminal(`codeaction: run ${state.runId} waits on ${call} (its signed state; arguments sha256 ${argsDigest.slice(0, 16)}); ${approved ? "approving" : "denying"} it.`)}\n`,
  );
  const reason = typeof decision === "object" ? decision.reason : undefined;
  return { approved, ...(reason === undefined ? {} : { reason }), call: { tool: pending.tool, argsDigest } };
}
