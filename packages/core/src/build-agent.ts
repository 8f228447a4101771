import { parseSize, type SandboxManager } from "@codeaction/sandbox";
import { CodeActionAgent, type TurnStream } from "./agent.ts";
import { type BuildAgentOptions, parseBuildAgentOptions } from "./build-agent-options.ts";
import { type Build, describeSandbox, newBuild, readySandbox } from "./build-agent-sandbox.ts";
import { ConfigError } from "./errors/config-error.ts";
import { connectServers } from "./mcp/index.ts";
import { loadModel } from "./model/model.ts";
import { type DataFile, describeDataFiles, describeDataFilesForPrompt } from "./program/data-files.ts";
import { describeNetwork } from "./prompt/prompt.ts";
import { threadStoreAccess, toolDigestsOf } from "./steps/thread-records.ts";
import { ThreadRegistry } from "./steps/thread-registry.ts";
import type { ResponseFormat, StructuredOf } from "./structured-answer.ts";
import { fromLangChainTool } from "./tools/from-langchain.ts";
import type { ToolSpec } from "./tools/tool-spec.ts";
import { createToolsRunner } from "./tools-pattern/runner.ts";
import { createShellTools, type StartingSession } from "./tools-pattern/shell-tools.ts";
import { observeOptionsOf } from "./tracing/observe-options.ts";
import { createCodeActionTurn } from "./turn/turn.ts";

/** The agent buildAgent makes: a LangChain Runnable (see agent.ts); `Structured` is `result.structured`'s type. */
export type Agent<Structured = unknown> = CodeActionAgent<Structured>;

/**
 * Builds an agent. Options are checked first (nothing starts on a bad option or a missing model
 * key); code-action and shell mode then need a working Docker sandbox, or the build fails.
 */
export async function buildAgent<const Format extends ResponseFormat | undefined = undefined>(
  input: BuildAgentOptions & { responseFormat?: Format },
): Promise<Agent<StructuredOf<Format>>> {
  const options = parseBuildAgentOptions(input);
  const timing = { timeoutSeconds: options.modelTimeout };
  const model = await loadModel(options.model, process.env, timing);
  const escalateModel = options.codeAction.escalate
    ? await loadModel(options.codeAction.escalate.model, process.env, timing)
    : undefined;
  const ownTools = options.extraTools.map((tool) => fromLangChainTool(tool));
  const build = newBuild(options);
  try {
    const dataFiles = await describeDataFilesFor(build);
    const shellSession = await readySandbox(build);
    const tools = await collectTools(build, ownTools, shellSession);
    const threads = build.codeAction ? threadRegistryFor(build, tools, dataFiles) : undefined;
    const codeActionTurn = build.codeAction
      ? createCodeActionTurn(
          {
            ...codeActionTurnOptions(build, dataFiles),
            model,
            tools,
            settings: {
              ...options.codeAction,
              escalate: escalateModel ? { model: escalateModel } : undefined,
            },
          },
          threads,
        )
      : undefined;
    const turn: TurnStream = codeActionTurn
      ? codeActionTurn.stream
      : createToolsRunner({
          model,
          tools,
          approval: options.approval,
          traceTools: options.traceTools,
          maxIterations: options.maxIterations,
          instructions: options.instructions,
          answerShape: options.answerShape,
          logger: options.logger,
        }).stream;
    const shutdown = closeOnce(build.cleanups);
    const resume = codeActionTurn && { stream: codeActionTurn.resume, secret: options.resumeSecret };
    return new CodeActionAgent<StructuredOf<Format>>({
      pattern: options.pattern,
      tools,
      turn,
      ...(resume ? { resume } : {}),
      shutdown,
      observe: observeOptionsOf(options),
      ...(threads ? { threads } : {}),
    });
  } catch (error) {
    await Promise.allSettled(build.cleanups.map((cleanup) => cleanup()));
    throw error;
  }
}

/** Code-action's data files, checked and sized against the sandbox's /workspace. */
async function describeDataFilesFor(build: Build): Promise<DataFile[]> {
  const paths = build.options.codeAction.dataFiles;
  if (!build.codeAction || !build.manager || paths.length === 0) return [];
  const disk = build.manager.config.diskLimit;
  const workspaceBytes = typeof disk === "number" ? disk : (parseSize(disk) ?? 1024 ** 3);
  return describeDataFiles(paths, workspaceBytes);
}

/** The agent's tools: the caller's, the MCP servers' (connected now), then shell mode's five. */
async function collectTools(
  build: Build,
  ownTools: ToolSpec[],
  shellSession: StartingSession | undefined,
): Promise<ToolSpec[]> {
  const { options } = build;
  const tools = [...ownTools];
  const shellTools = shellSession ? createShellTools(shellSession) : [];
  if (options.servers && Object.keys(options.servers).length > 0) {
    // An MCP tool named like one of ours (sandbox_exec in shell mode too) becomes <server>_<tool>.
    const connected = await connectServers(options.servers, {
      logger: options.logger,
      existingToolNames: [...tools, ...shellTools].map((tool) => tool.name),
    });
    build.cleanups.unshift(() => connected.close());
    tools.push(...connected.tools);
  }
  tools.push(...shellTools);
  refuseDuplicateNames(tools);
  return tools;
}

/** The code-action turn's options that come from the build: sandbox, prompt facts, removals. */
function codeActionTurnOptions(build: Build, dataFiles: DataFile[]) {
  const { options, manager, pendingRemovals } = build;
  return {
    sandbox: manager as SandboxManager,
    instructions: options.instructions,
    approval: options.approval,
    resumeSecret: options.resumeSecret,
    usedStates: options.usedStates,
    logger: options.logger,
    networkRule: describeNetwork(manager?.config.network ?? "none"),
    answerShape: options.answerShape,
    sandboxDescription: [
      describeSandbox(manager?.config ?? {}),
      ...(dataFiles.length > 0 ? [describeDataFilesForPrompt(dataFiles)] : []),
    ].join(". "),
    dataFiles,
    trackRemoval: (removal: Promise<void>) => {
      pendingRemovals.add(removal);
      void removal.finally(() => pendingRemovals.delete(removal));
    },
  };
}

/** With codeAction.state "thread": the agent's threads, stopped by close() (their histories stay stored). */
function threadRegistryFor(
  build: Build,
  tools: ToolSpec[],
  dataFiles: DataFile[],
): ThreadRegistry | undefined {
  const { options } = build;
  if (options.codeAction.state !== "thread") return undefined;
  const store =
    options.threadStore && options.resumeSecret !== undefined
      ? threadStoreAccess(options.threadStore, {
          secret: options.resumeSecret,
          tools: toolDigestsOf(tools),
          dataFiles,
        })
      : undefined;
  // Each live thread holds a container: no more threads than the sandbox keeps alive at once (its
  // maxConcurrent and maxTotalMemory), or a new thread's container would wait for an idle one's.
  const liveLimit = build.manager?.liveLimit ?? options.codeAction.maxThreads;
  const maxThreads = Math.min(options.codeAction.maxThreads, liveLimit);
  if (maxThreads < options.codeAction.maxThreads) {
    options.logger?.debug(
      { maxThreads, liveLimit },
      "codeAction.maxThreads lowered to the sandbox's live containers",
    );
  }
  const threads = new ThreadRegistry({
    maxThreads,
    idleSeconds: options.codeAction.idleSeconds,
    ...(store ? { store } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  build.cleanups.push(() => threads.close());
  return threads;
}

/** The agent's close(): every cleanup once, in parallel; the first failure is thrown. */
function closeOnce(cleanups: Array<() => Promise<void>>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      const outcomes = await Promise.allSettled(cleanups.map((cleanup) => cleanup()));
      const failure = outcomes.find((outcome) => outcome.status === "rejected");
      if (failure) throw failure.reason;
    })();
    return closing;
  };
}

function refuseDuplicateNames(tools: ToolSpec[]): void {
  const seen = new Map<string, string>();
  for (const tool of tools) {
    const earlier = seen.get(tool.name);
    if (earlier !== undefined) {
      throw new ConfigError({
        message: `two tools are named '${tool.name}' (from ${earlier} and ${tool.origin}). Rename one of them.`,
      });
    }
    seen.set(tool.name, tool.origin);
  }
}
