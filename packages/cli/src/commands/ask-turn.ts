// One `ask` turn: Ctrl-C during and before it, the run record and the journal, the answer printed.
import type { Agent, AgentResult } from "@codeaction/core";
import { DATA_IMAGE as dataImage, DEFAULT_IMAGE as defaultImage } from "@codeaction/sandbox/images";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { appendToJournal } from "../journal/append.ts";
import {
  completeJournalRecord,
  failJournalRecord,
  type JournalRecord,
  recordEvent,
  terminalSafeJson,
} from "../journal/journal-record.ts";
import { attachReplay } from "../journal/replay-record.ts";
import { keepResumeState } from "../journal/resume-record.ts";
import { type ModelChoice, modelCallSettings } from "../model-choice.ts";
import { explainModelFailure, type ModelCallSettings } from "../model-failure.ts";
import { saveOutputFiles } from "../output/save-output-files.ts";
import type { AgentSession } from "../session/agent-session.ts";
import { formatAnswer } from "../terminal/format-answer.ts";
import type { Progress } from "../terminal/progress.ts";
import { usageSummary } from "../terminal/run-summary.ts";
import { hasTimings, seconds, showTimings } from "../terminal/timings.ts";
import { runTurn } from "../terminal/turn-events.ts";
import { type ResumeRequest, reportInterrupted } from "./ask-approval.ts";
import type { AskRequest } from "./ask-arguments.ts";

/** The exit code of a run that waits for a decision (answered "later"). */
export const waitingExitCode = 3;

/** One question's run: what it needs to report, record and journal. */
export type AskTurn = {
  request: AskRequest;
  context: CliContext;
  progress: Progress;
  record: JournalRecord;
  journalPath: string | undefined;
  started: number;
  /** `codeaction resume`: the kept run this turn continues instead of asking the model. */
  resume?: ResumeRequest | undefined;
  /** The session whose agent answers: every call to it takes its options (callOptions). */
  session: Pick<AgentSession, "callOptions">;
};

/** What a failed model call of this turn is explained with: its tries, its timeout, where it went. */
function modelCallOf(turn: AskTurn): ModelCallSettings {
  const { request, record } = turn;
  const { model } = record;
  const choice: ModelChoice =
    model.kind === "replay"
      ? model
      : { kind: "live", model: model.name, ...(model.baseUrl ? { baseUrl: model.baseUrl } : {}) };
  const options = {
    retries: request.retries,
    timeoutSeconds: request.modelTimeout,
    model: request.values.model,
  };
  return modelCallSettings(choice, options);
}

/**
 * Builds the agent and runs the turn, Ctrl-C aware: during the turn it cancels it (the run record
 * says "aborted" and the journal keeps it); before, it closes the agent and exits 130. A failed
 * run is journaled before its error is thrown. The session closes the agent after the answer is
 * printed (the container's removal, under way since the program ended, does not hold the answer).
 */
export async function askOnce(turn: AskTurn, build: () => Promise<Agent>): Promise<AgentResult> {
  const { request, context, progress, record, journalPath } = turn;
  let agent: Agent | undefined;
  const turnAbort = new AbortController();
  let turnRunning = false;
  const interrupt = () => {
    progress.note("codeaction: interrupted; removing the sandbox containers");
    if (turnRunning) return turnAbort.abort(new Error("interrupted (Ctrl-C)"));
    void (agent?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  // A resumed run's record names its run from the start: a refused resume is journaled with it too.
  if (turn.resume) record.runId = turn.resume.runId;
  try {
    agent = await build();
    turnRunning = true;
    const { resume } = turn;
    if (resume) record.resumed = resumedOf(resume);
    const callOptions = turn.session.callOptions({ signal: turnAbort.signal });
    const result = resume
      ? await agent.resume(resume.state, resume.decision, callOptions)
      : await runTurn(agent, request.question, {
          progress,
          context,
          showProgram: request.showProgram,
          verbose: request.verbose,
          callOptions,
          onEvent: (event) => recordEvent(record, event),
          image: request.values.image ?? (request.values.data ? dataImage : defaultImage),
        });
    completeJournalRecord(record, result);
    if (result.status === "interrupted") keepResumeState(record, result);
    else await attachReplay(record, result, agent);
    return result;
  } catch (error) {
    progress.stop();
    await failJournalRecord(record, error);
    const refusal = error as { code?: unknown; reason?: unknown };
    if (record.resumed && refusal.code === "resume-state" && typeof refusal.reason === "string") {
      record.resumed.refused = refusal.reason;
    }
    record.timings.totalMs = Math.round(performance.now() - turn.started);
    if (journalPath) await appendToJournal(journalPath, record, context.env).catch(() => undefined);
    if (request.showProgram) showTimings(record.attempts.filter(hasTimings), context);
    if (!turnAbort.signal.aborted) throw explainModelFailure(error, modelCallOf(turn));
    throw new CliError("interrupted; the run record says aborted", {
      code: "interrupted",
      exitCode: 130,
      cause: error,
    });
  } finally {
    process.removeListener("SIGINT", interrupt);
    progress.stop();
  }
}

/** What a resumed run's record says of its decision: approved or denied, the reason, the call it was about. */
function resumedOf(resume: ResumeRequest): NonNullable<JournalRecord["resumed"]> {
  const { decision } = resume;
  const approved = typeof decision === "boolean" ? decision : decision.approved;
  const reason = typeof decision === "object" ? decision.reason : undefined;
  const call = typeof decision === "object" ? decision.call : undefined;
  return { decision: approved ? "approved" : "denied", ...(reason ? { reason } : {}), ...call };
}

/**
 * Saves the files, journals the record (before the answer is printed), then prints the answer; the
 * exit code. An interrupted run (answered "later") prints how to resume it instead, exit code 3.
 */
export async function reportAnswer(turn: AskTurn, result: AgentResult): Promise<number> {
  const { request, context, record, journalPath } = turn;
  if (result.status === "interrupted") {
    record.timings.totalMs = Math.round(performance.now() - turn.started);
    if (journalPath) await appendToJournal(journalPath, record, context.env);
    reportInterrupted(result, context, journalPath !== undefined && record.resume !== undefined);
    if (request.values.json) context.stdout.write(`${terminalSafeJson(record, 2)}\n`);
    return waitingExitCode;
  }
  record.timings.totalMs = Math.round(performance.now() - turn.started);
  record.timings.turnMs = result.timings.totalMs;
  await saveOutputFiles(result, record, { out: request.values.out, context });
  // The journal is written before the answer is printed: an answer on screen is always on record.
  if (journalPath) await appendToJournal(journalPath, record, context.env);
  if (request.verbose) context.stderr.write(`${usageSummary(result.usage)}\n`);
  if (request.showProgram) {
    if (result.pattern === "tools") {
      const toolMs = result.toolCalls.reduce((total, call) => total + call.durationMs, 0);
      context.stderr.write(
        `timings: ${result.toolCalls.length} tool calls ${seconds(toolMs)}, turn ${seconds(result.timings.totalMs)} (the rest is the model)\n`,
      );
    } else {
      showTimings(result.attempts, context);
    }
  }
  if (result.status === "escalated") {
    context.stderr.write(
      "codeaction: every attempt failed; the answer is the escalation model's program's result\n",
    );
  }
  if (request.values.json) {
    context.stdout.write(`${terminalSafeJson(record, 2)}\n`);
  } else {
    context.stdout.write(formatAnswer(result.answer, request.format));
  }
  return 0;
}
