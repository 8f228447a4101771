import { resolve } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { Agent, AgentResult } from "@codeaction/core";
import { writePrivateFile } from "@codeaction/core/durable";
import { DATA_IMAGE, DEFAULT_IMAGE } from "@codeaction/sandbox/images";
import type { BaseMessage } from "@langchain/core/messages";
import { choiceOption, parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { type DataFileArgument, dataFileArguments } from "../data-files/data-formats.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { type JournalRecord, recordEvent } from "../journal/journal-record.ts";
import { describeModelChoice, modelCallSettings } from "../model-choice.ts";
import { explainModelFailure, type ModelCallSettings } from "../model-failure.ts";
import { saveOutputFiles } from "../output/save-output-files.ts";
import { type AgentSession, openAgentSession } from "../session/agent-session.ts";
import { planAgentSession, type SessionPlan } from "../session/session-plan.ts";
import { sessionState } from "../session/session-state.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { type AnswerFormat, answerFormats, formatAnswer } from "../terminal/format-answer.ts";
import { createProgress, describeCopy, type Progress } from "../terminal/progress.ts";
import { programOutputLine } from "../terminal/run-summary.ts";
import { resumeSecret } from "./ask-approval.ts";
import { keepWaitingTurn, type SessionApproval, sessionApprovalFor } from "./chat-approval.ts";
import { modelTimeoutOption, questionOptions, retriesOption } from "./question-options.ts";

export const chatHelp = `Usage: codeaction chat [options]

An interactive session over your data: each line is a question, answered by a program in a fresh
sandbox, and each question sees the conversation so far (earlier questions and answers), so
"and in Q2?" works. On a terminal: line editing and history. Anywhere else (a pipe, a file) each
line of stdin is one question, so a session can be scripted.

In the session:
  /program              show the last program
  /files                list the files the last answer brought back
  /save [PATH]          write the session's record as JSON (default ./codeaction-chat-<time>.json)
  /help                 this list
  Ctrl-C                cancel the running question (the model call and the container are
                        stopped) and keep the session; at the prompt, clear the line
  Ctrl-D, /exit         end the session

Options: --csv FILE, --file FILE (.csv .tsv .json .jsonl .xlsx .parquet), --server "CMD", --quiet,
--model M, --retries N, --model-timeout SECONDS, --replay FILE (one recorded reply per program, across the whole session),
--data, --image NAME, --format table|json|csv|text, --out DIR, as for \`codeaction ask\`, and:
  --approve             ask on the terminal before each tool call: y, n, or later (the turn stops,
                        no container is left, its state is kept in the journal, and the session
                        goes on; the answer then comes through codeaction resume RUN_ID --approve
                        or --deny, outside this chat; "later" needs CODEACTION_RESUME_SECRET).
                        Needs a terminal on stdin
  --journal PATH        where a turn answered "later" is kept (default ${defaultJournalPath});
                        chat journals no other turn
  --steps N             up to N programs a question, each seeing the last one's output (default 1)
  --no-state            a fresh interpreter for every question; by default the conversation keeps
                        one live interpreter (its own container), so a follow-up finds what earlier
                        programs loaded and computed (kept under .codeaction/threads, signed, when
                        CODEACTION_RESUME_SECRET is set)`;

const chatOptions = {
  ...questionOptions,
  approve: { type: "boolean" },
  journal: { type: "string" },
  "no-state": { type: "boolean" },
} as const;

type ChatTurn = {
  question: string;
  runId?: string;
  answer?: string;
  error?: string;
  program?: string;
  files: string[];
  /** Answered "later": the tool whose call waits for `codeaction resume`. */
  waiting?: string;
};

export async function chatCommand(args: string[], context: CliContext): Promise<number> {
  const command = "chat";
  const { values, positionals } = parseCommandArguments(command, args, chatOptions);
  if (values.help) {
    context.stdout.write(`${chatHelp}\n`);
    return 0;
  }
  checkChatArguments(values, positionals);
  const format: AnswerFormat =
    choiceOption(command, "format", values.format, answerFormats) ??
    (context.stdout.isTTY ? "table" : "text");
  const plan = await planAgentSession(values, context, { command });
  const files = dataFileArguments({ csv: values.csv, file: values.file }, context.cwd);
  const quiet = values.quiet === true;
  const progress = createProgress({ stream: context.stderr, quiet });
  if (!quiet) progress.note(describeModelChoice(plan.modelChoice));
  const image = values.image ?? (values.data ? DATA_IMAGE : DEFAULT_IMAGE);
  const { session, modelCall } = await openChatSession(plan, { values, context, progress, image, files });
  try {
    const approval = chatApproval(values, context, {
      model: plan.modelChoice,
      pattern: "code-action",
      image,
      tables: session.data.tables,
      toolNames: session.data.tools.map((tool) => tool.name),
      servers: plan.serverLines,
    });
    const agent = await session.build(approval?.agentOptions);
    progress.stop();
    await runSession(agent, {
      context,
      format,
      out: values.out,
      quiet,
      modelCall,
      approval,
      agentSession: session,
    });
  } finally {
    await session.close();
  }
  return 0;
}

/**
 * The chat's agent session (a warm pool for its many questions). The model call's settings are
 * read once the data is in: their usage errors come after the data files' own.
 */
async function openChatSession(
  plan: SessionPlan,
  options: {
    values: ChatValues;
    context: CliContext;
    progress: Progress;
    image: string;
    files: DataFileArgument[];
  },
): Promise<{ session: AgentSession; modelCall: ModelCallSettings }> {
  const { values, context, progress, image, files } = options;
  const command = "chat";
  const readModelCall = () =>
    modelCallSettings(plan.modelChoice, {
      retries: retriesOption(command, values.retries),
      timeoutSeconds: modelTimeoutOption(command, values["model-timeout"]),
      model: values.model,
    });
  let modelCall: ModelCallSettings | undefined;
  const session = await openAgentSession(plan, context, {
    pattern: "code-action",
    image,
    files,
    questions: "many",
    progress,
    modelCall: () => {
      progress.update("checking the Docker sandbox");
      modelCall = readModelCall();
      return modelCall;
    },
    onRetry: (line) => context.stderr.write(`codeaction: ${line}\n`),
    modelLoad: "after-data",
    state: sessionState(command, values, {
      thread: true,
      cwd: context.cwd,
      secret: resumeSecret(context.env),
    }),
  });
  return { session, modelCall: modelCall ?? readModelCall() };
}

type ChatValues = ReturnType<typeof parseCommandArguments<typeof chatOptions>>["values"];

/** --approve: the session's approval; a turn answered "later" goes to --journal (or the default). */
function chatApproval(
  values: { approve?: boolean | undefined; journal?: string | undefined },
  context: CliContext,
  record: Parameters<typeof sessionApprovalFor>[1]["record"],
): SessionApproval | undefined {
  if (!values.approve) return undefined;
  const journal = resolve(context.cwd, values.journal ?? defaultJournalPath);
  return sessionApprovalFor(context, { journal, record });
}

function checkChatArguments(
  values: { image?: string | undefined; data?: boolean | undefined; approve?: boolean | undefined },
  positionals: string[],
): void {
  const command = "chat";
  if (positionals.length > 0) {
    throw new UsageError({
      command,
      message: "chat takes no question on the command line; type them in the session",
    });
  }
  if (values.image !== undefined && values.data) {
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  }
  if (values.approve && process.stdin.isTTY !== true) {
    throw new UsageError({
      command,
      message:
        "--approve asks on a terminal, and stdin is not one: run it in a terminal, or leave --approve out",
    });
  }
}

type Session = {
  agent: Agent;
  context: CliContext;
  format: AnswerFormat;
  out: string | undefined;
  quiet: boolean;
  modelCall: ModelCallSettings;
  messages: BaseMessage[];
  turns: ChatTurn[];
  last?: AgentResult;
  /** Cancels the running turn, when there is one. */
  cancel?: () => void;
  /** --approve: the approval, and the record a turn answered "later" is kept with. */
  approval?: SessionApproval;
  /** Where the agent comes from; every call to it takes its options. */
  agentSession: AgentSession;
};

async function runSession(
  agent: Agent,
  options: {
    context: CliContext;
    format: AnswerFormat;
    out: string | undefined;
    quiet: boolean;
    modelCall: ModelCallSettings;
    approval: Session["approval"];
    agentSession: AgentSession;
  },
): Promise<void> {
  const { context } = options;
  const interactive = process.stdin.isTTY === true && context.stdout.isTTY === true;
  const lines = createInterface({
    input: process.stdin,
    ...(interactive ? { output: context.stderr, terminal: true, historySize: 500 } : { terminal: false }),
  });
  const { approval, ...rest } = options;
  const session: Session = { agent, ...rest, ...(approval ? { approval } : {}), messages: [], turns: [] };
  approval?.chat.attach(lines, interactive);
  lines.on("SIGINT", () => {
    if (session.cancel) {
      session.cancel();
      context.stderr.write("\ncodeaction: cancelling this question; the session goes on\n");
    } else {
      context.stderr.write("^C (Ctrl-D ends the session)\n");
      lines.write(null, { ctrl: true, name: "u" });
      prompt(lines, interactive);
    }
  });
  prompt(lines, interactive);
  for await (const line of lines) {
    const text = line.trim();
    if (text === "/exit" || text === "/quit") break;
    if (text !== "") await handleLine(session, text);
    prompt(lines, interactive);
  }
  lines.close();
}

function prompt(lines: Interface, interactive: boolean): void {
  if (interactive) {
    lines.setPrompt("? ");
    lines.prompt();
  }
}

async function handleLine(session: Session, text: string): Promise<void> {
  const { context } = session;
  if (text.startsWith("/")) {
    const [name, ...rest] = text.split(/\s+/);
    if (name === "/program") {
      const program = session.turns.findLast((turn) => turn.program)?.program;
      context.stderr.write(`${program ? escapeForTerminal(program.trimEnd()) : "no program yet"}\n`);
    } else if (name === "/files") {
      const files = session.turns.at(-1)?.files ?? [];
      context.stderr.write(
        files.length ? `${files.map((file) => escapeForTerminal(file)).join("\n")}\n` : "no files\n",
      );
    } else if (name === "/save") {
      const path = resolve(
        context.cwd,
        rest.join(" ") || `codeaction-chat-${new Date().toISOString().replace(/[:.]/g, "-")}.json`,
      );
      // The session holds the questions, answers and programs: private, like the journal.
      try {
        await writePrivateFile(path, `${JSON.stringify({ version: 1, turns: session.turns }, null, 2)}\n`, {
          hint: "remove it or choose another path (/save FILE)",
        });
        context.stderr.write(`saved the session to ${escapeForTerminal(path)}\n`);
      } catch (error) {
        context.stderr.write(
          `codeaction: cannot save the session: ${escapeForTerminal((error as Error).message)}\n`,
        );
      }
    } else {
      context.stderr.write(`${chatHelp.split("In the session:\n")[1]?.split("\n\nOptions:")[0] ?? ""}\n`);
    }
    return;
  }
  await askInSession(session, text);
}

/** One question: a turn that sees the conversation so far. A failure is reported and the session goes on. */
async function askInSession(session: Session, question: string): Promise<void> {
  const { context } = session;
  const turn: ChatTurn = { question, files: [] };
  session.turns.push(turn);
  const record = session.approval?.newRecord(question);
  const progress = createProgress({ stream: context.stderr, quiet: session.quiet });
  session.approval?.chat.setProgress(progress);
  const messages = [...session.messages, { role: "user" as const, content: question }];
  const abort = new AbortController();
  let cancelled = false;
  session.cancel = () => {
    cancelled = true;
    session.approval?.chat.cancelQuestion();
    // A real abort: the model call and the running program stop, and the container is removed.
    abort.abort(new Error("cancelled (Ctrl-C)"));
  };
  try {
    progress.update("waiting for the model");
    const events = await session.agent.stream(
      { messages },
      session.agentSession.callOptions({ signal: abort.signal }),
    );
    for await (const event of events) {
      if (record) recordEvent(record, event);
      if (event.type === "program-start") {
        turn.program = event.program;
        progress.update("running the program in the sandbox");
      } else if (event.type === "program-output") {
        progress.note(programOutputLine(event));
      } else if (event.type === "data-file-copy") {
        progress.count(describeCopy(event));
        if (event.bytesCopied === event.totalBytes) progress.update("running the program in the sandbox");
      } else if (event.type === "answer") {
        progress.stop();
        await finishTurn(session, turn, event.result, record);
        return;
      }
    }
    throw new Error("the agent's stream ended without an answer");
  } catch (error) {
    progress.stop();
    const explained = explainModelFailure(error, session.modelCall);
    turn.error = cancelled ? "cancelled" : explained instanceof Error ? explained.message : String(explained);
    context.stderr.write(
      cancelled
        ? "codeaction: cancelled\n"
        : `codeaction: this question failed: ${escapeForTerminal(turn.error)}\n`,
    );
  } finally {
    progress.stop();
    session.cancel = undefined;
  }
}

async function finishTurn(
  session: Session,
  turn: ChatTurn,
  result: AgentResult,
  record: JournalRecord | undefined,
): Promise<void> {
  if (result.status === "interrupted") {
    // The turn waits for `codeaction resume`: the conversation goes on without it.
    turn.runId = result.runId;
    turn.waiting = result.interrupt.pending.tool;
    const { journal } = session.approval!.chat;
    await keepWaitingTurn({ record: record!, result, journal, context: session.context });
    return;
  }
  // The next question sees this one and its answer.
  session.messages = result.messages;
  session.last = result;
  turn.runId = result.runId;
  turn.answer = result.answer;
  turn.files = await saveOutputFiles(result, undefined, { out: session.out, context: session.context });
  session.context.stdout.write(formatAnswer(result.answer, session.format));
}
