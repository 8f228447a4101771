// The sandbox of one `ask`: the prelaunch (whether it pays, the files it places), the manager that
// takes it over, and the agent built on it.
import { access } from "node:fs/promises";
import { availableParallelism } from "node:os";
import type { Agent, ApprovalHook, ModelOption, ServerSpec, UsedStates } from "@codeaction/core";
import type { SandboxManager } from "@codeaction/sandbox";
import type { SandboxPrelaunch } from "@codeaction/sandbox/prelaunch";
import type { Logger } from "pino";
import type { LoadedData } from "../data-files/csv-tools.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import type { ScanJob } from "../data-files/scan-thread.ts";
import type { AskRequest } from "./ask-arguments.ts";
import { preimportFor } from "./question-options.ts";

/** The sandbox of one `ask`: the prelaunch, then the manager that takes it over, and --debug's logger. */
export type SandboxHolder = {
  prelaunch: SandboxPrelaunch | undefined;
  manager?: SandboxManager;
  logger?: Logger;
  /** Set when the command ends: a manager is no longer opened (its modules may load after a failure). */
  ended?: boolean;
};

/**
 * Whether a prelaunch pays here. Its worker costs its own Node start-up and its own load of the
 * sandbox package, about 0.8 s of CPU, taken from this thread's load on a machine with no core to
 * spare: on two cores a question without data was 0.2 s slower with it (1,816 against 1,619 ms,
 * docs/performance.md). With data files the worker also copies them, off the critical path.
 */
export function worthAWorker(files: DataFileArgument[]): boolean {
  return files.length > 0 || availableParallelism() > 2;
}

/**
 * The data files the prelaunch places at /workspace/data while LangChain loads (the turn copies only
 * what is not there yet): all but parquet files, which reach the sandbox as their CSV conversion.
 */
export function filesToPlace(files: DataFileArgument[]): string[] {
  return files.filter((file) => file.format !== "parquet").map((file) => file.path);
}

export async function filesExist(paths: string[]): Promise<boolean> {
  const found = await Promise.all(
    paths.map((path) =>
      access(path).then(
        () => true,
        () => false,
      ),
    ),
  );
  return found.every(Boolean);
}

/** The sandbox settings of `ask`: no network, the chosen image (the prelaunch's and the agent's). */
export function askSandbox(image: string) {
  return { network: "none", image } as const;
}

/** The modules that build the agent: LangChain (through @codeaction/core) is most of the load. */
export function agentModules(): Promise<AgentModules> {
  return Promise.all([import("@codeaction/core"), import("../data-files/csv-tool.ts"), import("pino")]);
}

export type AgentModules = [
  typeof import("@codeaction/core"),
  typeof import("../data-files/csv-tool.ts"),
  { default: typeof import("pino").default },
];

/**
 * The --debug logger and, for code-action, the sandbox manager, made ready at once: one question,
 * one container, so no warm pool (nothing would use its refill); the prelaunched container is the
 * turn's, taken over by ready() with its relay started. A failure of ready() is the turn's to report.
 */
export function openSandbox(options: {
  request: AskRequest;
  image: string | undefined;
  sandbox: SandboxHolder;
  modules: AgentModules;
}): void {
  const { request, image, sandbox } = options;
  const [{ createCodeActionSandbox }, , { default: pino }] = options.modules;
  const logger = request.values.debug
    ? pino({ level: "debug" }, pino.destination({ fd: 2, sync: true }))
    : undefined;
  if (logger) sandbox.logger = logger;
  const workerEntry = sandbox.prelaunch?.workerEntry;
  if (workerEntry) logger?.debug({ workerEntry }, "prelaunch worker entry");
  if (request.pattern !== "code-action" || image === undefined || sandbox.ended) return;
  sandbox.manager = createCodeActionSandbox(
    { ...askSandbox(image), pool: 0 },
    {
      preimport: preimportFor(image),
      ...(sandbox.prelaunch ? { prelaunch: sandbox.prelaunch } : {}),
      ...(logger ? { logger } : {}),
    },
  );
  sandbox.manager.ready().catch(() => {});
}

/** The agent for one question: the data's tools, the servers, and the sandbox of code-action. */
export function buildAskAgent(options: {
  request: AskRequest;
  model: ModelOption;
  csv: LoadedData;
  servers: Record<string, ServerSpec>;
  sandbox: SandboxHolder;
  modules: AgentModules;
  approval?: ApprovalHook | undefined;
  resumeSecret?: string | undefined;
  usedStates?: UsedStates | undefined;
}): Promise<Agent> {
  const { request, csv, servers, sandbox, approval, resumeSecret, usedStates } = options;
  const [{ buildAgent }, { callsToReadAll }] = options.modules;
  const logger = sandbox.logger;
  return buildAgent({
    model: options.model,
    pattern: request.pattern,
    extraTools: csv.tools,
    ...(Object.keys(servers).length > 0 ? { servers } : {}),
    ...(request.pattern === "code-action"
      ? {
          ...(sandbox.manager ? { sandbox: sandbox.manager } : {}),
          // Paging through a big CSV is legitimate: it must not use up the default 50 calls.
          codeAction: {
            maxToolCalls: 50 + csv.tables.reduce((total, table) => total + callsToReadAll(table) - 1, 0),
            // Also in the sandbox, read-only: a program can read a big file directly instead of paging.
            dataFiles: csv.sandboxFiles,
            preimport: preimportFor(sandbox.manager?.config.image),
          },
        }
      : {}),
    ...(logger ? { logger } : {}),
    ...(approval ? { approval } : {}),
    ...(resumeSecret ? { resumeSecret } : {}),
    ...(usedStates ? { usedStates } : {}),
  });
}

/**
 * With --debug: where each data file was scanned, "worker" (its thread) or "this thread" (no worker
 * could run), and the worker's entry module (the bundle's own in the installed command). The
 * packaging test reads it.
 */
export function logScans(logger: Logger | undefined, scans: ScanJob[]): void {
  for (const scan of scans) {
    const { scannedIn, workerEntry } = scan;
    logger?.debug({ file: scan.file.path, scannedIn, workerEntry }, "data file scanned");
  }
}
