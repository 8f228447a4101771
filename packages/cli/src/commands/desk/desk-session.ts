import { basename } from "node:path";
import type { AgentEvent, AgentResult } from "@codeaction/core";
import type { BaseMessage } from "@langchain/core/messages";
import type { CliContext } from "../../context.ts";
import type { DataFileArgument } from "../../data-files/data-formats.ts";
import { appendToJournal } from "../../journal/append.ts";
import {
  completeJournalRecord,
  createJournalRecord,
  failJournalRecord,
  type JournalRecord,
  recordEvent,
} from "../../journal/journal-record.ts";
import type { ModelChoice } from "../../model-choice.ts";
import type { ModelCallSettings } from "../../model-failure.ts";
import { outputFolderFor, writeOutputFiles } from "../../output/write-output-files.ts";
import type { BuiltSession } from "../../session/agent-session.ts";
import { parseAnswer } from "../../terminal/format-answer.ts";
import { describeError } from "./desk-errors.ts";
import { lastErrorLine } from "./desk-failure.ts";

/** The desk's agent session over its data files, its agent built. */
export type DeskAgent = BuiltSession;

/** Builds the desk's agent session over a list of data files: again after each upload. */
export type DeskAgentBuilder = (files: DataFileArgument[]) => Promise<DeskAgent>;

/** One message to the page, sent as a Server-Sent Event. */
export type DeskEvent = { event: string; data: unknown };

/** The desk's one conversation: the agent, the messages so far, where files and records go. */
export type DeskSession = {
  /**
   * The agent and its data, or none while the sandbox cannot start (Docker not running, the image
   * missing): the next question builds it again, and shows the failure with its fix until it works.
   */
  built: DeskAgent | undefined;
  /** The data files the agent was built over: the given ones, then the uploads. */
  files: DataFileArgument[];
  /** Builds the agent again over a new list of files (after an upload). */
  buildAgent: DeskAgentBuilder;
  /** The desk's own folder for the files dropped on the page. */
  uploadFolder: string;
  modelChoice: ModelChoice;
  /** Where the model calls go, their tries and timeout: a failed call's message names them. */
  modelCall: ModelCallSettings;
  image: string;
  /** Each --server command line by its server's name, for the run record. */
  servers: Record<string, string>;
  context: CliContext;
  /** The folder the files of each run go to, as <outRoot>/<runId>/. */
  outRoot: string;
  journalPath: string | undefined;
  messages: BaseMessage[];
  /** A question or an upload is under way: another waits (409). */
  busy: boolean;
  /** Removes the conversation's thread store of this process alone, when the desk stops. */
  removeThreads?: () => Promise<void>;
};

/**
 * Answers one question in the conversation (or a new one), sending progress as it happens and the
 * answer (parsed when JSON, the files' addresses, timings and usage) at the end. A failure is sent
 * as an `error` event with its fix; the conversation is kept.
 */
export async function askInDesk(
  session: DeskSession,
  options: {
    question: string;
    newConversation: boolean;
    send: (event: DeskEvent) => void;
    /** Aborted when the page that asked went away: the run is cancelled (its record says so). */
    signal?: AbortSignal;
  },
): Promise<void> {
  const { question, send } = options;
  if (options.newConversation) {
    session.messages = [];
    // The conversation's live interpreter goes with it: the next question starts a new thread.
    await session.built?.newConversation();
  }
  const built = await readyAgent(session, send);
  if (!built) return;
  const record: JournalRecord = {
    ...createJournalRecord({
      question,
      model: session.modelChoice,
      pattern: "code-action",
      image: session.image,
      tables: built.data.tables,
      toolNames: built.data.tools.map((tool) => tool.name),
      servers: session.servers,
    }),
    command: "desk",
  };
  const started = performance.now();
  try {
    send({ event: "progress", data: { text: "waiting for the model" } });
    const events = await built.agent.stream(
      { messages: [...session.messages, { role: "user", content: question }] },
      built.callOptions({ signal: options.signal }),
    );
    for await (const event of events) {
      if (event.type === "answer") {
        await finish(session, { result: event.result, record, started, send });
        return;
      }
      recordEvent(record, event);
      const message = describeEvent(event);
      if (message) send(message);
    }
    throw new Error("the agent's stream ended without an answer");
  } catch (error) {
    await failJournalRecord(record, error);
    record.timings.totalMs = Math.round(performance.now() - started);
    if (session.journalPath) {
      await appendToJournal(session.journalPath, record, session.context.env).catch(() => undefined);
    }
    send({ event: "error", data: describeError(error, built.data.tables, session.modelCall) });
  }
}

/** The session's agent, built now when the sandbox could not start before; undefined (the error sent) when it still cannot. */
async function readyAgent(
  session: DeskSession,
  send: (event: DeskEvent) => void,
): Promise<DeskAgent | undefined> {
  if (session.built) return session.built;
  send({ event: "progress", data: { text: "starting the sandbox" } });
  try {
    session.built = await session.buildAgent(session.files);
    return session.built;
  } catch (error) {
    send({ event: "error", data: describeError(error) });
    return undefined;
  }
}

async function finish(
  session: DeskSession,
  options: {
    result: AgentResult;
    record: JournalRecord;
    started: number;
    send: (event: DeskEvent) => void;
  },
): Promise<void> {
  const { result, record, send } = options;
  completeJournalRecord(record, result);
  record.timings.totalMs = Math.round(performance.now() - options.started);
  session.messages = result.messages;
  const paths =
    result.files.length === 0
      ? []
      : await writeOutputFiles(
          result.files,
          outputFolderFor(result.runId, { out: session.outRoot, cwd: "/" }),
        );
  paths.forEach((path, index) => {
    const recorded = record.files?.[index];
    if (recorded) recorded.path = path;
  });
  if (session.journalPath) await appendToJournal(session.journalPath, record, session.context.env);
  send({
    event: "answer",
    data: {
      runId: result.runId,
      answer: result.answer,
      value: parseAnswer(result.answer),
      files: result.files.map((file, index) => ({
        name: file.name,
        mediaType: file.mediaType,
        size: file.size,
        url: `/out/${encodeURIComponent(result.runId)}/${encodeURIComponent(basename(paths[index] ?? file.name))}`,
      })),
      refusedFiles: result.refusedFiles,
      totalMs: record.timings.totalMs,
      usage: result.usage,
      // How many questions this conversation holds now (1 for a new one): what the model saw.
      conversationQuestions: result.messages.filter((message) => message.getType() === "human").length,
    },
  });
}

/** What the page shows of one event of the turn. */
function describeEvent(event: AgentEvent): DeskEvent | undefined {
  switch (event.type) {
    case "program-start":
      return {
        event: "program",
        data: {
          attempt: event.attempt,
          ...(event.step === undefined ? {} : { step: event.step }),
          program: event.program,
        },
      };
    case "tool-call":
      return { event: "progress", data: { text: `the program called ${event.tool}` } };
    case "tool-result":
      return {
        event: "tool",
        data: { tool: event.tool, status: event.status, durationMs: Math.round(event.durationMs) },
      };
    case "program-end": {
      // The line that names a failed program's error, found here once (the page shows it first).
      const errorLine =
        event.status === "ok" ? undefined : lastErrorLine(`${event.stdoutTail}${event.stderrTail}`);
      return {
        event: "output",
        data: {
          attempt: event.attempt,
          ...(event.step === undefined ? {} : { step: event.step }),
          status: event.status,
          exitCode: event.exitCode ?? null,
          stdout: event.stdoutTail,
          stderr: event.stderrTail,
          ...(errorLine ? { errorLine } : {}),
        },
      };
    }
    case "program-output":
      // Bounded by the run (core's live output: 2000 lines, 256 KiB, then one event with `cut`).
      return {
        event: "line",
        data: { attempt: event.attempt, stream: event.stream, line: event.line, cut: event.cut === true },
      };
    case "repair-start":
      return {
        event: "progress",
        data: { text: `attempt failed: ${event.reason}; asking for a corrected program` },
      };
    default:
      return undefined;
  }
}
