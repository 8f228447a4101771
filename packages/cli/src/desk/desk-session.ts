import { basename } from "node:path";
import type { Agent, AgentEvent, AgentResult } from "@codeaction/core";
import type { BaseMessage } from "@langchain/core/messages";
import type { CliContext } from "../context.ts";
import type { LoadedData } from "../csv/csv-tools.ts";
import type { DataFileArgument } from "../csv/data-formats.ts";
import { appendToJournal } from "../journal/append.ts";
import type { ModelChoice } from "../model-choice.ts";
import { outputFolderFor, writeOutputFiles } from "../output/write-output-files.ts";
import { completeRunRecord, createRunRecord, failRunRecord, recordEvent } from "../run-record.ts";
import { parseAnswer } from "../terminal/format-answer.ts";
import type { DeskAgentBuilder } from "./desk-agent.ts";

/** One message to the page, sent as a Server-Sent Event. */
export type DeskEvent = { event: string; data: unknown };

/** The desk's one conversation: the agent, the messages so far, where files and records go. */
export type DeskSession = {
  agent: Agent;
  data: LoadedData;
  /** The data files the agent was built over: the given ones, then the uploads. */
  files: DataFileArgument[];
  /** Builds the agent again over a new list of files (after an upload). */
  buildAgent: DeskAgentBuilder;
  /** The desk's own folder for the files dropped on the page. */
  uploadFolder: string;
  modelChoice: ModelChoice;
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
};

/**
 * Answers one question in the conversation (or a new one), sending progress as it happens and the
 * answer (parsed when JSON, the files' addresses, timings and usage) at the end. A failure is sent
 * as an `error` event with its fix; the conversation is kept.
 */
export async function askInDesk(
  session: DeskSession,
  options: { question: string; newConversation: boolean; send: (event: DeskEvent) => void },
): Promise<void> {
  const { question, send } = options;
  if (options.newConversation) session.messages = [];
  const record = createRunRecord({
    question,
    model: session.modelChoice,
    pattern: "code-action",
    image: session.image,
    tables: session.data.tables,
    toolNames: session.data.tools.map((tool) => tool.name),
    servers: session.servers,
  });
  const started = performance.now();
  try {
    send({ event: "progress", data: { text: "waiting for the model" } });
    const events = await session.agent.stream({
      messages: [...session.messages, { role: "user", content: question }],
    });
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
    await failRunRecord(record, error);
    record.timings.totalMs = Math.round(performance.now() - started);
    if (session.journalPath) {
      await appendToJournal(session.journalPath, record, session.context.env).catch(() => undefined);
    }
    send({ event: "error", data: describeError(error) });
  }
}

async function finish(
  session: DeskSession,
  options: {
    result: AgentResult;
    record: ReturnType<typeof createRunRecord>;
    started: number;
    send: (event: DeskEvent) => void;
  },
): Promise<void> {
  const { result, record, send } = options;
  completeRunRecord(record, result);
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
      return { event: "program", data: { attempt: event.attempt, program: event.program } };
    case "tool-call":
      return { event: "progress", data: { text: `the program called ${event.tool}` } };
    case "tool-result":
      return {
        event: "tool",
        data: { tool: event.tool, status: event.status, durationMs: Math.round(event.durationMs) },
      };
    case "program-end":
      return {
        event: "output",
        data: {
          attempt: event.attempt,
          status: event.status,
          exitCode: event.exitCode ?? null,
          stdout: event.stdoutTail,
          stderr: event.stderrTail,
        },
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

/** A failure as the page shows it: the message and, for the ones a user can act on, the fix. */
export function describeError(error: unknown): { message: string; fix?: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (/connect ENOENT|docker\.sock|Cannot connect to the Docker daemon|ECONNREFUSED/i.test(message)) {
    return { message, fix: "Start Docker (the desk runs each program in a Docker sandbox), then ask again." };
  }
  if (/No such image|image .* not found|pull access denied/i.test(message)) {
    return {
      message,
      fix: "Build the sandbox image: codeaction image build (add --data for pandas and matplotlib).",
    };
  }
  return { message };
}
