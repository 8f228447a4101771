// `chat --approve`: the terminal approval of `ask --approve`, its answers read through the
// session's own line reader, and a turn answered "later" kept in the journal for `codeaction resume`.
import type { Interface } from "node:readline";
import type { ApprovalHook, InterruptedResult } from "@codeaction/core";
import type { CliContext } from "../context.ts";
import { appendToJournal } from "../journal/append.ts";
import { completeJournalRecord, createJournalRecord, type JournalRecord } from "../journal/journal-record.ts";
import { keepResumeState } from "../journal/resume-record.ts";
import { createTerminalApproval, type QuestionHold } from "../program/terminal-approval.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { reportInterrupted, resumeSecret, resumeSecretVariable } from "./ask-approval.ts";

/** The approval of a chat session, and where a turn answered "later" is kept. */
export type ChatApproval = {
  hook: ApprovalHook;
  /** The journal a turn answered "later" is appended to. */
  journal: string;
  /** The session's line reader, once it exists: the answers are read through it. */
  attach(lines: Interface, interactive: boolean): void;
  /** Ctrl-C during a turn: the question that waits for an answer is dropped (the call is refused). */
  cancelQuestion(): void;
  /** The running turn's progress line: held off while a question waits, so it does not overwrite it. */
  setProgress(progress: QuestionHold | undefined): void;
};

/**
 * The approval hook of `chat --approve`: y, n or later, as `ask --approve` asks. The answers are
 * read through the session's reader: a second reader on stdin would take the session's next
 * question as an answer, or an answer as the next question. "Later" needs the secret that signs
 * the kept state; without it the terminal says so and asks again.
 */
export function chatApprovalFor(context: CliContext, journal: string): ChatApproval {
  let reader: { lines: Interface; interactive: boolean } | undefined;
  let pending: AbortController | undefined;
  let progress: QuestionHold | undefined;
  const readAnswer = (question: string, signal?: AbortSignal) =>
    new Promise<string>((resolve) => {
      if (!reader || signal?.aborted) return resolve("");
      const { lines, interactive } = reader;
      // On a terminal the reader writes the question as its prompt; else it has no output.
      if (!interactive) context.stderr.write(question);
      const abort = new AbortController();
      pending = abort;
      const done = (line: string) => {
        lines.off("close", ended);
        pending = undefined;
        resolve(line);
      };
      const ended = () => done("");
      lines.once("close", ended);
      abort.signal.addEventListener("abort", ended, { once: true });
      signal?.addEventListener("abort", () => abort.abort(), { once: true });
      try {
        lines.question(interactive ? question : "", { signal: abort.signal }, done);
      } catch {
        ended(); // the session's reader is closed: the call is refused
      }
    });
  const unavailable =
    resumeSecret(context.env) === undefined
      ? `codeaction: "later" needs ${resumeSecretVariable} set: the key (at least 16 bytes, e.g. openssl rand -hex 32) that signs the kept state, the same for codeaction resume; answer y or n`
      : undefined;
  const { hook } = createTerminalApproval(context.stderr, {
    later: unavailable ? { unavailable } : {},
    readAnswer,
    progress: { hold: () => progress?.hold(), release: () => progress?.release() },
  });
  return {
    hook,
    journal,
    attach: (lines, interactive) => {
      reader = { lines, interactive };
    },
    cancelQuestion: () => pending?.abort(),
    setProgress: (current) => {
      progress = current;
    },
  };
}

/** A chat session's approval, and the record each of its turns is followed in. */
export type SessionApproval = {
  chat: ChatApproval;
  newRecord: (question: string) => JournalRecord;
  /** What buildAgent takes: the hook, and the secret that signs a kept state. */
  agentOptions: { approval: ApprovalHook; resumeSecret?: string };
};

/** --approve in `chat`: the approval, and each turn's record (journaled when answered "later"). */
export function sessionApprovalFor(
  context: CliContext,
  options: { journal: string; record: Omit<Parameters<typeof createJournalRecord>[0], "question"> },
): SessionApproval {
  const chat = chatApprovalFor(context, options.journal);
  const secret = resumeSecret(context.env);
  return {
    chat,
    agentOptions: { approval: chat.hook, ...(secret ? { resumeSecret: secret } : {}) },
    newRecord: (question) => ({ ...createJournalRecord({ ...options.record, question }), command: "chat" }),
  };
}

/**
 * A chat turn answered "later": its record, with the signed state, is appended to the journal,
 * and the CLI prints how to resume it. Its answer comes through `codeaction resume`, outside the
 * chat; the session goes on. A journal that cannot be written is reported (the run cannot resume).
 */
export async function keepWaitingTurn(options: {
  record: JournalRecord;
  result: InterruptedResult;
  journal: string;
  context: CliContext;
}): Promise<void> {
  const { record, result, journal, context } = options;
  completeJournalRecord(record, result);
  keepResumeState(record, result);
  let kept = false;
  try {
    await appendToJournal(journal, record, context.env);
    kept = record.resume !== undefined;
  } catch (error) {
    context.stderr.write(
      `codeaction: cannot keep the run in the journal: ${escapeForTerminal((error as Error).message)}\n`,
    );
  }
  reportInterrupted(result, context, kept);
  if (kept) {
    context.stderr.write(
      "codeaction: its answer comes through codeaction resume, outside this chat (this session will not see it); the chat goes on with the next question.\n",
    );
  }
}
