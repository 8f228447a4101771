import { randomBytes } from "node:crypto";
// The agent session of the CLI's front-ends (`ask`, `chat`, the desk): the servers and the model
// chosen, the data files scanned, the model loaded, the sandbox, and the agent built over them.
// Every front-end builds its agent here, in one order, and closes it once.
import { basename } from "node:path";
import type { Agent, ModelOption, ServerSpec } from "@codeaction/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CliContext } from "../context.ts";
import type { LoadedData } from "../data-files/csv-tools.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import { type ScanJob, scanInThreads } from "../data-files/scan-thread.ts";
import { loadModel } from "../model-load.ts";
import { describeCopy, type Progress } from "../terminal/progress.ts";
import { agentOptions } from "./agent-options.ts";
import type { AgentExtras, SessionOptions, SessionPlan } from "./session-plan.ts";
import {
  type AgentModules,
  agentModules,
  closeSandbox,
  logScans,
  openSandbox,
  type SessionSandbox,
  startSandbox,
} from "./session-sandbox.ts";

/** One front-end's agent session: the data, the model, the sandbox; the agent once built. */
export type AgentSession = {
  readonly plan: SessionPlan;
  readonly options: SessionOptions;
  readonly data: LoadedData;
  readonly model: ModelOption;
  readonly servers: Record<string, ServerSpec>;
  readonly scans: ScanJob[];
  readonly sandbox: SessionSandbox;
  /** The agent, once built. */
  readonly agent: Agent | undefined;
  /** Builds the agent (once: a later call gets the same one). */
  build(extras?: AgentExtras): Promise<Agent>;
  /**
   * The options of every call to the agent (a turn, a resume). A conversation's thread id, once
   * chat and the desk keep one, joins them here.
   */
  callOptions(options?: { signal?: AbortSignal | undefined }): Partial<RunnableConfig>;
  /** A new conversation: a new thread id; the old thread's interpreter and history are dropped. */
  newConversation(): Promise<void>;
  /** The conversation's thread id (chat, the desk). */
  readonly threadId: string;
  /** Closes the agent, the data's conversions and the sandbox, once: a later call waits for the first. */
  close(): Promise<void>;
};

/** An agent session whose agent is built. */
export type BuiltSession = AgentSession & { readonly agent: Agent };

/**
 * The second step: the data files scanned (in worker threads), the model loaded and the sandbox
 * made ready while LangChain loads, then the session, its agent still to build. Whatever it started
 * is closed again when a step fails.
 */
export async function openAgentSession(
  plan: SessionPlan,
  context: CliContext,
  options: SessionOptions,
): Promise<AgentSession> {
  const sandbox = options.sandbox ?? (await startSandbox(options));
  // The data files are scanned in worker threads meanwhile, too: for the prompt, their heads only
  // (a big file's rows are estimated from its typing sample, not counted to its end).
  const scans = options.scans ?? scanInThreads(options.files, { rowCount: "estimated" });
  try {
    const modules = beginModules(sandbox, options);
    // A failure here has closed what it loaded (the data's conversions).
    const loaded = await loadDataAndModel(plan, context, { ...options, scans });
    return sessionOf({ plan, options, sandbox, scans, modules, ...loaded });
  } catch (error) {
    await closeSandbox(sandbox);
    throw error;
  }
}

/**
 * LangChain and the agent's modules, loading while the scans run in their threads; the sandbox gets
 * ready once they are in (the prelaunched container taken over, its relay started). A failed load
 * is reported after the data files' own errors. The prelaunch's placing shows on the progress line.
 */
function beginModules(sandbox: SessionSandbox, options: SessionOptions): Promise<AgentModules> {
  const { progress } = options;
  sandbox.prelaunch?.onPlacing(({ containerPath, bytesCopied, totalBytes }) =>
    progress.count(describeCopy({ name: basename(containerPath), bytesCopied, totalBytes })),
  );
  const modules = agentModules().then((loaded) => {
    openSandbox(sandbox, { pattern: options.pattern, debug: options.debug === true, modules: loaded });
    return loaded;
  });
  modules.catch(() => {});
  return modules;
}

/** The data and the model, in the session's order (ModelLoadOrder). */
async function loadDataAndModel(
  plan: SessionPlan,
  context: CliContext,
  options: SessionOptions & { scans: ScanJob[] },
): Promise<{ data: LoadedData; model: ModelOption }> {
  const { loadDataFiles } = await import("../data-files/csv-tools.ts");
  const loadData = () =>
    loadDataFiles(options.files, options.progress, {
      sandbox: options.pattern === "code-action",
      scans: options.scans,
    });
  const startModel = (): Promise<ModelOption> => {
    if (options.model) return Promise.resolve(options.model);
    const { retries, timeoutSeconds } = options.modelCall();
    const pending = loadModel(plan.modelChoice, {
      retries,
      timeoutSeconds,
      onRetry: options.onRetry,
      env: context.env,
      wait: context.wait,
    });
    pending.catch(() => {});
    return pending;
  };
  if (options.modelLoad === "after-data") {
    const data = await loadData();
    return { data, model: await closingOnFailure(data, startModel()) };
  }
  const modelLoad = startModel();
  if (options.modelLoad === "before-data") await modelLoad;
  const data = await loadData();
  return { data, model: await closingOnFailure(data, modelLoad) };
}

/** `pending`, with the data's conversions removed when it fails. */
async function closingOnFailure<T>(data: LoadedData, pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (error) {
    await data.close();
    throw error;
  }
}

function sessionOf(parts: {
  plan: SessionPlan;
  options: SessionOptions;
  sandbox: SessionSandbox;
  scans: ScanJob[];
  modules: Promise<AgentModules>;
  data: LoadedData;
  model: ModelOption;
}): AgentSession {
  const { plan, options, sandbox, modules, data, model } = parts;
  let agent: Agent | undefined;
  let building: Promise<Agent> | undefined;
  let closing: Promise<void> | undefined;
  const build = async (extras: AgentExtras = {}): Promise<Agent> => {
    const loaded = await modules;
    logScans(sandbox.logger, parts.scans);
    const { buildAgent } = loaded[0];
    agent = await buildAgent(agentOptions({ plan, options, sandbox, data, model, modules: loaded, extras }));
    return agent;
  };
  const close = async () => {
    sandbox.ended = true;
    // An agent under construction is closed once it is built (or its failure is its builder's).
    await building?.catch(() => undefined);
    await agent?.close().catch(() => undefined);
    await data.close();
    await closeSandbox(sandbox);
  };
  const conversation = conversationOf(options, () => agent);
  return {
    plan,
    options,
    data,
    model,
    servers: plan.servers,
    scans: parts.scans,
    sandbox,
    get agent() {
      return agent;
    },
    build(extras) {
      if (closing) return Promise.reject(new Error("the agent session is closed"));
      building ??= build(extras);
      return building;
    },
    callOptions: conversation.callOptions,
    newConversation: conversation.newConversation,
    get threadId() {
      return conversation.threadId;
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
}

/**
 * The session's conversation (codeAction.state "thread"): its thread id in every call's options,
 * and a new conversation that drops the old thread's interpreter and history.
 */
function conversationOf(
  options: SessionOptions,
  agent: () => Agent | undefined,
): Pick<AgentSession, "callOptions" | "newConversation" | "threadId"> {
  let threadId = options.threadId ?? newThreadId();
  return {
    get threadId() {
      return threadId;
    },
    callOptions: ({ signal } = {}) => ({
      ...(signal ? { signal } : {}),
      ...(options.state?.thread ? { configurable: { thread_id: threadId } } : {}),
    }),
    async newConversation() {
      const ended = threadId;
      threadId = newThreadId();
      if (options.state?.thread)
        await agent()
          ?.dropThread(ended)
          .catch(() => undefined);
    },
  };
}

/** A conversation's thread id: random, so a stored thread is never another conversation's. */
function newThreadId(): string {
  return `conversation-${randomBytes(12).toString("hex")}`;
}

/**
 * The session again over other data files (the desk's upload): the same plan, model and sandbox
 * settings, the files scanned anew, and its agent built.
 */
export async function reopenWithFiles(
  session: AgentSession,
  context: CliContext,
  options: { files: DataFileArgument[]; progress: Progress; scans?: ScanJob[]; threadId?: string },
): Promise<BuiltSession> {
  const { scans: _scansBefore, ...settings } = session.options;
  // The same conversation: with a thread store, its interpreter is restored from the history kept
  // there (a file added leaves the earlier programs' data as it was).
  const reopened = await openAgentSession(session.plan, context, {
    ...settings,
    ...options,
    model: session.model,
    threadId: options.threadId ?? session.threadId,
  });
  return buildSession(reopened);
}

/** Builds the session's agent; the session is closed again when the build fails. */
export async function buildSession(session: AgentSession, extras?: AgentExtras): Promise<BuiltSession> {
  try {
    await session.build(extras);
  } catch (error) {
    await session.close();
    throw error;
  }
  return session as BuiltSession;
}
