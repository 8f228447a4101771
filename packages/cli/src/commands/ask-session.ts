// The rest of `codeaction ask` once its sandbox is starting (ask.ts): the session (LangChain, the
// data and the model), the turn, and its report.
import { resolve } from "node:path";
import type { CliContext } from "../context.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { createJournalRecord } from "../journal/journal-record.ts";
import { describeModelChoice } from "../model-choice.ts";
import { type AgentSession, openAgentSession } from "../session/agent-session.ts";
import { planAgentSession } from "../session/session-plan.ts";
import { closeSandbox, type SessionSandbox } from "../session/session-sandbox.ts";
import { createProgress, type Progress } from "../terminal/progress.ts";
import { type ResumeRequest, resumeSecret, terminalApprovalFor } from "./ask-approval.ts";
import type { AskRequest } from "./ask-arguments.ts";
import { askOnce, reportAnswer } from "./ask-turn.ts";

/** `ask`'s question answered in a session over `sandbox` (started by ask.ts, closed here in every case). */
export async function askWithSandbox(options: {
  request: AskRequest;
  context: CliContext;
  resume: ResumeRequest | undefined;
  image: string | undefined;
  files: DataFileArgument[];
  sandbox: SessionSandbox;
}): Promise<number> {
  const { request, context, resume, image, files, sandbox } = options;
  const { values, pattern } = request;
  let session: AgentSession;
  let progress: Progress;
  try {
    const plan = await planAgentSession(values, context, { command: "ask", resuming: resume?.runId });
    const quiet = values.quiet === true;
    progress = createProgress({ stream: context.stderr, quiet });
    if (!quiet) progress.note(describeModelChoice(plan.modelChoice));
    session = await openAgentSession(plan, context, {
      pattern,
      image,
      files,
      questions: "one",
      progress,
      modelCall: () => ({ retries: request.retries, timeoutSeconds: request.modelTimeout }),
      onRetry: (line) => progress.note(`codeaction: ${line}`),
      modelLoad: "beside-data",
      debug: values.debug === true,
      state: { maxSteps: request.steps },
      sandbox,
    });
  } catch (error) {
    await closeSandbox(sandbox);
    throw error;
  }
  try {
    return await askInSession({ request, context, session, progress, resume });
  } finally {
    await session.close();
  }
}

async function askInSession(options: {
  request: AskRequest;
  context: CliContext;
  session: AgentSession;
  progress: Progress;
  resume: ResumeRequest | undefined;
}): Promise<number> {
  const { request, context, session, progress, resume } = options;
  const { values, question, pattern } = request;
  // Against the command's folder (main()'s context), as chat, resume, replay and audit verify do.
  const journalPath = values["no-journal"]
    ? undefined
    : resolve(context.cwd, values.journal ?? defaultJournalPath);
  const { data, plan } = session;
  const record = createJournalRecord({
    question,
    model: plan.modelChoice,
    pattern,
    image: session.sandbox.image,
    tables: data.tables,
    toolNames: data.tools.map((tool) => tool.name),
    servers: plan.serverLines,
  });
  const started = performance.now();
  const turn = { request, context, progress, record, journalPath, started, resume, session };
  const approval = terminalApprovalFor(request, context, {
    journaled: journalPath !== undefined,
    resuming: resume !== undefined,
    progress,
  });
  const result = await askOnce(turn, async () => {
    progress.update(pattern === "code-action" ? "checking the Docker sandbox" : "preparing the tools");
    const agent = await session.build({
      approval: approval?.hook,
      resumeSecret: resumeSecret(context.env),
      usedStates: resume?.usedStates,
    });
    record.timings.setupMs = Math.round(performance.now() - started);
    return agent;
  }).finally(() => approval?.close());
  return reportAnswer(turn, result);
}
