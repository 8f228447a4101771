// The first step of an agent session (agent-session.ts), the same for every front-end: the servers
// and the model chosen; and what a front-end tells the session it opens.
import type { ApprovalHook, ModelOption, ServerSpec, UsedStates } from "@codeaction/core";
import type { CliContext } from "../context.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import type { ScanJob } from "../data-files/scan-thread.ts";
import { chooseModel, type ModelChoice } from "../model-choice.ts";
import { serverCommandLines, serverSpecs } from "../server-options.ts";
import type { Progress } from "../terminal/progress.ts";
import type { SessionQuestions, SessionSandbox } from "./session-sandbox.ts";
import type { SessionState } from "./session-state.ts";

export type SessionCommand = "ask" | "chat" | "desk";

/** The command-line values every front-end's session reads (the options of these names). */
export type SessionValues = {
  server?: string[] | undefined;
  model?: string | undefined;
  replay?: string | undefined;
};

/** What a session is made of before anything loads: its servers, and its model chosen. */
export type SessionPlan = {
  command: SessionCommand;
  servers: Record<string, ServerSpec>;
  /** Each --server command line by its server's name, for the run record. */
  serverLines: Record<string, string>;
  modelChoice: ModelChoice;
};

/**
 * The first step, the same for every front-end: the --server command lines checked, then the model
 * chosen (a missing key or replay file is reported here, before a data file is read).
 */
export async function planAgentSession(
  values: SessionValues,
  context: CliContext,
  options: { command: SessionCommand; resuming?: string | undefined },
): Promise<SessionPlan> {
  const { command, resuming } = options;
  const commandLines = values.server ?? [];
  const servers = await serverSpecs(commandLines, command, context.cwd);
  const modelChoice = await chooseModel({
    model: values.model,
    replay: values.replay,
    env: context.env,
    cwd: context.cwd,
    ...(resuming ? { resuming } : {}),
  });
  return { command, servers, serverLines: serverCommandLines(commandLines, servers), modelChoice };
}

/** A model call's tries and timeout (--retries, --model-timeout). */
export type ModelCallOptions = { retries: number; timeoutSeconds: number | undefined };

/**
 * When the model loads, and so which failure a session reports first when its data and its model
 * both fail (each front-end's order, kept): "beside-data" starts it with the scans and reports the
 * data first (`ask`); "after-data" reads its options and loads it once the data is in (`chat`);
 * "before-data" loads it first (the desk).
 */
export type ModelLoadOrder = "beside-data" | "after-data" | "before-data";

export type SessionOptions = {
  pattern: "code-action" | "tools";
  /** The code-action sandbox's image; undefined for the tools pattern. */
  image: string | undefined;
  files: DataFileArgument[];
  questions: SessionQuestions;
  progress: Progress;
  /** The model call's options, read when the model starts loading (their usage errors then). */
  modelCall: () => ModelCallOptions;
  /** How a retried model call is announced. */
  onRetry: (line: string) => void;
  modelLoad: ModelLoadOrder;
  /** --debug of `ask`: the sandbox's debug log on stderr. */
  debug?: boolean;
  /** Scans already under way (the desk's upload); else the files are scanned in threads from now. */
  scans?: ScanJob[];
  /** The model already loaded (the desk's agent rebuilt after an upload goes on with its replies). */
  model?: ModelOption;
  /** Steps and threads (code-action): --steps, and one thread per conversation (chat, the desk). */
  state?: SessionState;
  /** The conversation to go on with (the desk's agent rebuilt after an upload); else a new one. */
  threadId?: string;
  /** The sandbox already started (`ask` starts it before its heavy modules load); else started here. */
  sandbox?: SessionSandbox;
};

/** What the front-end adds to its agent: its approval, and a resumed run's key and used states. */
export type AgentExtras = {
  approval?: ApprovalHook | undefined;
  resumeSecret?: string | undefined;
  usedStates?: UsedStates | undefined;
};
