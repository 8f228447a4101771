// The sandbox of an agent session: for one question (`ask`), a container prelaunched while the CLI
// loads and a manager without a pool that takes it over; for many (`chat`, the desk), the settings
// buildAgent makes its own manager from, with its warm pool.
import { access } from "node:fs/promises";
import { availableParallelism } from "node:os";
import type { SandboxManager } from "@codeaction/sandbox";
import { SandboxPrelaunch } from "@codeaction/sandbox/prelaunch";
import type { Logger } from "pino";
import { preimportFor } from "../commands/question-options.ts";
import type { DataFileArgument } from "../data-files/data-formats.ts";
import type { ScanJob } from "../data-files/scan-thread.ts";

/** How many questions a session answers: one (`ask`: one container) or many (a warm pool). */
export type SessionQuestions = "one" | "many";

/** The sandbox of one session: the prelaunch, then the manager that takes it over, and --debug's logger. */
export type SessionSandbox = {
  questions: SessionQuestions;
  /** The code-action sandbox's image; undefined for the tools pattern (no sandbox). */
  image: string | undefined;
  prelaunch: SandboxPrelaunch | undefined;
  manager?: SandboxManager;
  logger?: Logger;
  /** Set when the session closes: a manager is no longer opened (its modules may load after a failure). */
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

/** The sandbox settings of the CLI's sessions: no network, the chosen image. */
export function sandboxSettings(image: string) {
  return { network: "none", image } as const;
}

/**
 * The session's sandbox before anything loads. For one question, its container starts in a worker
 * thread now, while LangChain and the data load here (not when a data file is missing: that error
 * comes next, and needs no container).
 */
export async function startSandbox(options: {
  questions: SessionQuestions;
  image: string | undefined;
  files: DataFileArgument[];
}): Promise<SessionSandbox> {
  const { questions, image, files } = options;
  const prelaunch =
    questions === "one" &&
    image !== undefined &&
    worthAWorker(files) &&
    (await filesExist(files.map((file) => file.path)))
      ? SandboxPrelaunch.start(sandboxSettings(image), { files: filesToPlace(files) })
      : undefined;
  return { questions, image, prelaunch };
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
 * The --debug logger and, for one question's code-action, the sandbox manager, made ready at once:
 * one question, one container, so no warm pool (nothing would use its refill); the prelaunched
 * container is the turn's, taken over by ready() with its relay started. A failure of ready() is the
 * turn's to report. For many questions the agent makes its own manager (sandboxOption).
 */
export function openSandbox(
  sandbox: SessionSandbox,
  options: { pattern: "code-action" | "tools"; debug: boolean; modules: AgentModules },
): void {
  const { image } = sandbox;
  const [{ createCodeActionSandbox }, , { default: pino }] = options.modules;
  const logger = options.debug
    ? pino({ level: "debug" }, pino.destination({ fd: 2, sync: true }))
    : undefined;
  if (logger) sandbox.logger = logger;
  const workerEntry = sandbox.prelaunch?.workerEntry;
  if (workerEntry) logger?.debug({ workerEntry }, "prelaunch worker entry");
  if (sandbox.questions !== "one" || options.pattern !== "code-action" || image === undefined) return;
  if (sandbox.ended) return;
  sandbox.manager = createCodeActionSandbox(
    { ...sandboxSettings(image), pool: 0 },
    {
      preimport: preimportFor(image),
      ...(sandbox.prelaunch ? { prelaunch: sandbox.prelaunch } : {}),
      ...(logger ? { logger } : {}),
    },
  );
  sandbox.manager.ready().catch(() => {});
}

/** What buildAgent's `sandbox` is: the session's own manager, or the settings it makes one from. */
export function sandboxOption(sandbox: SessionSandbox) {
  if (sandbox.manager) return { sandbox: sandbox.manager };
  return sandbox.questions === "many" && sandbox.image !== undefined
    ? { sandbox: sandboxSettings(sandbox.image) }
    : {};
}

/**
 * Ends the session's sandbox: the manager removes its containers; without one (a failure before the
 * agent was built) the prelaunch removes its container.
 */
export async function closeSandbox(sandbox: SessionSandbox): Promise<void> {
  sandbox.ended = true;
  await (sandbox.manager?.close() ?? sandbox.prelaunch?.close());
}

/**
 * With --debug: where each data file was scanned, "worker" (its thread) or "this thread" (no worker
 * could run), the worker's entry module (the bundle's own in the installed command), and the scan's
 * own time (the bench's breakdown). The packaging test reads it.
 */
export function logScans(logger: Logger | undefined, scans: ScanJob[]): void {
  for (const scan of scans) {
    const { scannedIn, workerEntry, durationMs } = scan;
    logger?.debug({ file: scan.file.path, scannedIn, workerEntry, scanMs: durationMs }, "data file scanned");
  }
}
