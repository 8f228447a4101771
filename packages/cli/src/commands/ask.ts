import { access } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename } from "node:path";
import type { Agent, AgentEvent, AgentResult, Attempt, ModelOption, ServerSpec } from "@codeaction/core";
import type { SandboxManager } from "@codeaction/sandbox";
import { DATA_IMAGE as dataImage, DEFAULT_IMAGE as defaultImage } from "@codeaction/sandbox/images";
import { type FileToPlace, SandboxPrelaunch } from "@codeaction/sandbox/prelaunch";
import type { Logger } from "pino";
import { choiceOption, parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import type { LoadedData } from "../csv/csv-tools.ts";
import { type DataFileArgument, dataFileArguments } from "../csv/data-formats.ts";
import { type ScanJob, scanInThreads } from "../csv/scan-thread.ts";
import { CliError } from "../errors/cli-error.ts";
import { UsageError } from "../errors/usage-error.ts";
import { appendToJournal, defaultJournalPath } from "../journal/append.ts";
import { attachReplay } from "../journal/replay-record.ts";
import { chooseModel, describeModelChoice, type ModelChoice } from "../model-choice.ts";
import { explainModelFailure } from "../model-failure.ts";
import { loadModel } from "../model-load.ts";
import { outputFolderFor, writeOutputFiles } from "../output/write-output-files.ts";
import {
  completeRunRecord,
  createRunRecord,
  failRunRecord,
  type RunRecord,
  recordEvent,
  terminalSafeJson,
} from "../run-record.ts";
import { serverCommandLines, serverSpecs } from "../server-options.ts";
import { describeAttemptFailure } from "../terminal/describe-attempt-failure.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { answerFormats, formatAnswer } from "../terminal/format-answer.ts";
import { createProgress, describeCopy, type Progress } from "../terminal/progress.ts";
import { programOutputLine, usageSummary } from "../terminal/run-summary.ts";
import { preimportFor, questionOptions, retriesOption } from "./question-options.ts";

// Only what checking the command line needs is imported up front; LangChain, the sandbox and the
// CSV parser load once the arguments are known to be good.

export const askHelp = `Usage: codeaction ask [options] "question"

Answers a question with a code-action agent: the model writes one Python program that calls the
tools below as functions, the program runs in a fresh Docker sandbox with no network, and the
answer is the value of its last \`RESULT:\` line. Only the answer goes to stdout; progress, the
model in use and --show-program go to stderr.

Data:
  --csv FILE            a CSV file; the program gets load_<name>() returning typed rows
                        (ints, floats, booleans inferred per column; blank cells None), and the
                        file itself, read-only, at /workspace/data/<file name> (repeatable)
  --file FILE           a data file, its format from the extension: .csv, .tsv, .json (an array
                        of records), .jsonl, .xlsx (the first sheet; pandas reads it in --data)
                        or .parquet (placed in the sandbox converted to CSV: the image has no
                        parquet reader); load_<name>() and /workspace/data as for --csv (repeatable)
  --server "CMD"        an MCP server started with this command line (stdio), or an http(s) URL;
                        its tools join the CSV tools (repeatable)

Model:
  --model M             live model, default openai:gpt-5-mini (needs OPENAI_API_KEY;
                        OPENAI_BASE_URL for a local OpenAI-compatible server); another
                        provider as provider:model, such as anthropic:claude-sonnet-4-5 (its
                        LangChain package installed beside codeaction, its key set)
  --replay FILE         play recorded replies instead: {"replies": ["<reply 1>", ...]}
  --retries N           try a failed model call again up to N times (default 2; 0 for never),
                        after 1 s, 2 s, 4 s...; only for HTTP 408, 409, 429, 5xx or no answer,
                        each retry shown on stderr
  --pattern P           code-action (default) or tools (a tool-calling chat loop, no sandbox)

Sandbox:
  --image NAME          the sandbox image (default ${defaultImage})
  --data                the data image, ${dataImage} (numpy, pandas)

Output:
  --format F            table, json, csv or text (the answer as the program printed it);
                        default: table on a terminal, text otherwise. A list of records is an
                        aligned table, a dict key/value lines, anything else itself
  --out DIR             where files the program saves under /workspace/out are written:
                        DIR/<runId>/ (default ./codeaction-out/<runId>/); their paths go to stderr
  --show-program        also show (on stderr) each program, each tool call and the timings
  --verbose             also show (on stderr) the program's output as it runs, and a usage line
  --quiet               no progress on stderr (on a terminal it shows the step, and rows and
                        bytes while a file is read)
  --json                print the whole run record as JSON instead of the answer
  --journal PATH        append the run record here (default ${defaultJournalPath})
  --no-journal          do not write the run record
  --debug               debug logs on stderr, stack traces on errors
  -h, --help            show this help

Example:
  codeaction ask --csv examples/data/orders.csv \\
    "What was the revenue per region in Q3 2026 (July to September)? Revenue is quantity times unit price."`;

const askOptions = {
  ...questionOptions,
  pattern: { type: "string" },
  "show-program": { type: "boolean" },
  verbose: { type: "boolean" },
  json: { type: "boolean" },
  journal: { type: "string" },
  "no-journal": { type: "boolean" },
} as const;

type AskRequest = NonNullable<ReturnType<typeof parseAskArguments>>;

export async function askCommand(args: string[], context: CliContext): Promise<number> {
  const request = parseAskArguments(args, context);
  if (!request) return 0;
  const { values, pattern } = request;
  const image =
    pattern === "code-action" ? (values.image ?? (values.data ? dataImage : defaultImage)) : undefined;
  const servers = await serverSpecs(values.server ?? [], "ask");
  const modelChoice = await chooseModel({ model: values.model, replay: values.replay, env: context.env });
  // The sandbox's container starts in a worker thread now, while LangChain and the data load here
  // (not when a data file is missing: that error comes next, and needs no container).
  const files = dataFileArguments({ csv: values.csv, file: values.file });
  const prelaunch =
    image !== undefined && worthAWorker(files) && (await filesExist(files.map((file) => file.path)))
      ? SandboxPrelaunch.start(askSandbox(image), { files: await filesToPlace(files) })
      : undefined;
  // The data files are scanned in worker threads meanwhile, too.
  const scans = scanInThreads(files);
  const sandbox: SandboxHolder = { prelaunch };
  try {
    return await askWithSandbox({ request, context, servers, modelChoice, image, sandbox, files, scans });
  } finally {
    // The manager removes its containers; without one (a failure before the agent was built) the
    // prelaunch removes its container.
    sandbox.ended = true;
    await (sandbox.manager?.close() ?? prelaunch?.close());
  }
}

/** The sandbox of one `ask`: the prelaunch, then the manager that takes it over, and --debug's logger. */
type SandboxHolder = {
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
function worthAWorker(files: DataFileArgument[]): boolean {
  return files.length > 0 || availableParallelism() > 2;
}

/**
 * The data files the prelaunch places at /workspace/data while LangChain loads (the turn copies only
 * what is not there yet): all but parquet files, which reach the sandbox as their CSV conversion.
 */
async function filesToPlace(files: DataFileArgument[]): Promise<FileToPlace[]> {
  const direct = files.filter((file) => file.format !== "parquet");
  if (direct.length === 0) return [];
  const { dataFilePath } = await import("@codeaction/core/internal");
  return direct.map((file) => ({ hostPath: file.path, containerPath: dataFilePath(file.path) }));
}

async function filesExist(paths: string[]): Promise<boolean> {
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
function askSandbox(image: string) {
  return { network: "none", image } as const;
}

async function askWithSandbox(options: {
  request: AskRequest;
  context: CliContext;
  servers: Record<string, ServerSpec>;
  modelChoice: ModelChoice;
  image: string | undefined;
  sandbox: SandboxHolder;
  files: DataFileArgument[];
  scans: ScanJob[];
}): Promise<number> {
  const { request, context, servers, modelChoice, image, sandbox, files, scans } = options;
  const { values, question, pattern } = request;
  const { loadDataFiles } = await import("../csv/csv-tools.ts");
  const journalPath = values["no-journal"] ? undefined : (values.journal ?? defaultJournalPath);
  const quiet = values.quiet === true;
  const progress = createProgress({ stream: context.stderr, quiet });
  if (!quiet) progress.note(describeModelChoice(modelChoice));
  // The prelaunch places the data files while this thread loads; its reports arrive between imports.
  sandbox.prelaunch?.onPlacing(({ containerPath, bytesCopied, totalBytes }) =>
    progress.count(describeCopy({ name: basename(containerPath), bytesCopied, totalBytes })),
  );
  // LangChain and the agent's modules load here while the scans run in their threads, and the
  // sandbox gets ready (the prelaunched container taken over, its relay started); a failed load is
  // reported after the data files' own errors.
  const modules = agentModules().then((loaded) => {
    openSandbox({ request, image, sandbox, modules: loaded });
    return loaded;
  });
  const modelLoad = loadModel(modelChoice, {
    retries: request.retries,
    onRetry: (line) => progress.note(`codeaction: ${line}`),
    env: context.env,
  });
  for (const pending of [modules, modelLoad]) pending.catch(() => {});
  const csv = await loadDataFiles(files, progress, { sandbox: pattern === "code-action", scans });
  const model = await modelLoad;
  const record = createRunRecord({
    question,
    model: modelChoice,
    pattern,
    image,
    tables: csv.tables,
    toolNames: csv.tools.map((tool) => tool.name),
    servers: serverCommandLines(values.server ?? [], servers),
  });
  const started = performance.now();
  const turn = { request, context, progress, record, journalPath, started };
  const result = await askOnce(turn, async () => {
    progress.update(pattern === "code-action" ? "checking the Docker sandbox" : "preparing the tools");
    const agent = await buildAskAgent({ request, model, csv, servers, sandbox, modules: await modules });
    record.timings.setupMs = Math.round(performance.now() - started);
    return agent;
  }).finally(() => csv.close());
  await reportAnswer(turn, result);
  return 0;
}

/** The checked command line, or undefined after printing the help. */
function parseAskArguments(args: string[], context: CliContext) {
  const command = "ask";
  const { values, positionals } = parseCommandArguments(command, args, askOptions);
  if (values.help) {
    context.stdout.write(`${askHelp}\n`);
    return undefined;
  }
  const question = positionals.join(" ").trim();
  if (question === "")
    throw new UsageError({ command, message: 'give the question, in quotes: codeaction ask "..."' });
  const pattern =
    choiceOption(command, "pattern", values.pattern, ["code-action", "tools"] as const) ?? "code-action";
  if (values.image !== undefined && values.data) {
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  }
  const format =
    choiceOption(command, "format", values.format, answerFormats) ??
    (context.stdout.isTTY ? "table" : "text");
  if (values.format !== undefined && values.json) {
    throw new UsageError({ command, message: "--format and --json cannot be combined" });
  }
  if (values.journal !== undefined && values["no-journal"]) {
    throw new UsageError({ command, message: "--journal and --no-journal cannot be combined" });
  }
  if (pattern === "tools" && (values.image !== undefined || values.data)) {
    throw new UsageError({
      command,
      message: "--image and --data choose the sandbox of --pattern code-action",
    });
  }
  const retries = retriesOption(command, values.retries);
  return {
    values,
    question,
    pattern,
    format,
    retries,
    showProgram: values["show-program"] === true,
    verbose: values.verbose === true,
  };
}

/** The modules that build the agent: LangChain (through @codeaction/core) is most of the load. */
function agentModules() {
  return Promise.all([import("@codeaction/core"), import("../csv/csv-tool.ts"), import("pino")]);
}

type AgentModules = Awaited<ReturnType<typeof agentModules>>;

/**
 * The --debug logger and, for code-action, the sandbox manager, made ready at once: one question,
 * one container, so no warm pool (nothing would use its refill); the prelaunched container is the
 * turn's, taken over by ready() with its relay started. A failure of ready() is the turn's to report.
 */
function openSandbox(options: {
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
function buildAskAgent(options: {
  request: AskRequest;
  model: ModelOption;
  csv: LoadedData;
  servers: Record<string, ServerSpec>;
  sandbox: SandboxHolder;
  modules: AgentModules;
}): Promise<Agent> {
  const { request, csv, servers, sandbox } = options;
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
  });
}

/** One question's run: what it needs to report, record and journal. */
type AskTurn = {
  request: AskRequest;
  context: CliContext;
  progress: Progress;
  record: RunRecord;
  journalPath: string | undefined;
  started: number;
};

/**
 * Builds the agent and runs the turn, Ctrl-C aware: during the turn it cancels it (the run record
 * says "aborted" and the journal keeps it); before, it closes the agent and exits 130. A failed
 * run is journaled before its error is thrown; the agent is closed either way.
 */
async function askOnce(turn: AskTurn, build: () => Promise<Agent>): Promise<AgentResult> {
  const { request, context, progress, record, journalPath } = turn;
  let agent: Agent | undefined;
  const turnAbort = new AbortController();
  let turnRunning = false;
  const interrupt = () => {
    progress.note("codeaction: interrupted; removing the sandbox containers");
    if (turnRunning) return turnAbort.abort(new Error("interrupted (Ctrl-C)"));
    void (agent?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  try {
    agent = await build();
    turnRunning = true;
    const result = await runTurn(agent, request.question, {
      progress,
      context,
      showProgram: request.showProgram,
      verbose: request.verbose,
      signal: turnAbort.signal,
      onEvent: (event) => recordEvent(record, event),
      image: request.values.image ?? (request.values.data ? dataImage : defaultImage),
    });
    completeRunRecord(record, result);
    await attachReplay(record, result, agent);
    return result;
  } catch (error) {
    progress.stop();
    await failRunRecord(record, error);
    record.timings.totalMs = Math.round(performance.now() - turn.started);
    if (journalPath) await appendToJournal(journalPath, record, context.env).catch(() => undefined);
    if (request.showProgram) showTimings(record.attempts.filter(hasTimings), context);
    if (!turnAbort.signal.aborted) throw explainModelFailure(error, request.retries);
    throw new CliError("interrupted; the run record says aborted", {
      code: "interrupted",
      exitCode: 130,
      cause: error,
    });
  } finally {
    process.removeListener("SIGINT", interrupt);
    progress.stop();
    await agent?.close().catch(() => undefined);
  }
}

/** Saves the files, journals the record (before the answer is printed), then prints the answer. */
async function reportAnswer(turn: AskTurn, result: AgentResult): Promise<void> {
  const { request, context, record, journalPath } = turn;
  record.timings.totalMs = Math.round(performance.now() - turn.started);
  record.timings.turnMs = result.timings.totalMs;
  await saveOutputFiles(result, record, { out: request.values.out, context });
  // The journal is written before the answer is printed: an answer on screen is always on record.
  if (journalPath) await appendToJournal(journalPath, record, context.env);
  if (request.verbose) context.stderr.write(`${usageSummary(result.usage)}\n`);
  if (request.showProgram) {
    if (result.pattern === "tools") {
      const toolMs = result.toolCalls.reduce((total, call) => total + call.durationMs, 0);
      context.stderr.write(
        `timings: ${result.toolCalls.length} tool calls ${seconds(toolMs)}, turn ${seconds(result.timings.totalMs)} (the rest is the model)\n`,
      );
    } else {
      showTimings(result.attempts, context);
    }
  }
  if (result.status === "escalated") {
    context.stderr.write(
      "codeaction: every attempt failed; the answer is the escalation model's program's result\n",
    );
  }
  if (request.values.json) {
    context.stdout.write(`${terminalSafeJson(record, 2)}\n`);
  } else {
    context.stdout.write(formatAnswer(result.answer, request.format));
  }
}

/** Writes the files that came back to disk, records where, and lists them (and any refusals) on stderr. */
export async function saveOutputFiles(
  result: AgentResult,
  record: RunRecord | undefined,
  options: { out: string | undefined; context: CliContext },
): Promise<string[]> {
  const { context } = options;
  for (const refused of result.refusedFiles) {
    context.stderr.write(
      `codeaction: /workspace/out/${escapeForTerminal(refused.name, { keepNewlines: false })} did not come back: ${escapeForTerminal(refused.reason, { keepNewlines: false })}\n`,
    );
  }
  if (result.files.length === 0) return [];
  const folder = outputFolderFor(result.runId, { out: options.out, cwd: context.cwd });
  const paths = await writeOutputFiles(result.files, folder);
  paths.forEach((path, index) => {
    const recorded = record?.files?.[index];
    if (recorded) recorded.path = path;
    const file = result.files[index]!;
    const renamed = file.renamedFrom
      ? `; renamed from /workspace/out/${escapeForTerminal(file.renamedFrom, { keepNewlines: false })}`
      : "";
    context.stderr.write(
      `file: ${escapeForTerminal(path, { keepNewlines: false })} (${file.size} bytes, ${file.mediaType}${renamed})\n`,
    );
  });
  return paths;
}

/** Streams one turn, turning its events into progress and (with --show-program) a trace on stderr. */
async function runTurn(
  agent: Agent,
  question: string,
  options: {
    progress: Progress;
    context: CliContext;
    showProgram: boolean;
    verbose: boolean;
    signal?: AbortSignal;
    onEvent?: (event: AgentEvent) => void;
    image: string;
  },
): Promise<AgentResult> {
  options.progress.update("waiting for the model");
  // Each attempt's stderr, for the line that says why it failed.
  const stderrTails = new Map<string, string>();
  const events = await agent.stream(
    { messages: [{ role: "user", content: question }] },
    options.signal ? { signal: options.signal } : {},
  );
  for await (const event of events) {
    if (event.type === "answer") return event.result;
    options.onEvent?.(event);
    reportEvent(event, { ...options, pattern: agent.pattern, stderrTails });
  }
  throw new Error("the agent's stream ended without an answer");
}

/** One event of a turn on the progress line; with --show-program, the program and its calls too. */
function reportEvent(
  event: AgentEvent,
  options: {
    progress: Progress;
    showProgram: boolean;
    verbose: boolean;
    pattern: Agent["pattern"];
    image: string;
    stderrTails: Map<string, string>;
  },
): void {
  const { progress, showProgram } = options;
  const show = (text: string) => progress.note(text);
  switch (event.type) {
    case "program-output":
      if (options.verbose) show(programOutputLine(event));
      break;
    case "program-start":
      if (showProgram) {
        show(`── attempt ${event.attempt}: the program ${"─".repeat(40)}`);
        show(escapeForTerminal(event.program.trimEnd()));
        show("─".repeat(60));
      }
      progress.update(`running the program (attempt ${event.attempt}) in the sandbox`);
      break;
    case "tool-call":
      // Code-action tool events name their attempt; in the tools pattern the model itself calls.
      progress.update(
        `the ${event.attempt === undefined ? "model" : "program"} called ${escapeForTerminal(event.tool, { keepNewlines: false })}`,
      );
      break;
    case "tool-result":
      if (showProgram) {
        show(
          `tool call ${escapeForTerminal(event.tool, { keepNewlines: false })}: ${event.status}, ${summarize(event)} (${Math.round(event.durationMs)} ms)`,
        );
      }
      progress.update(
        options.pattern === "code-action" ? "running the program in the sandbox" : "waiting for the model",
      );
      break;
    case "program-end":
      options.stderrTails.set(`${event.sample ?? 0}:${event.attempt}`, event.stderrTail);
      if (showProgram) showProgramEnd(event, show);
      break;
    case "data-file-copy":
      // Shown on a terminal only.
      progress.count(describeCopy(event));
      if (event.bytesCopied === event.totalBytes)
        progress.update(`running the program (attempt ${event.attempt}) in the sandbox`);
      break;
    case "repair-start":
      showRepairStart(event, options);
      break;
    default:
      break;
  }
}

/** Why the attempt before a repair failed, with a fix where one is known. */
function showRepairStart(
  event: Extract<AgentEvent, { type: "repair-start" }>,
  options: { progress: Progress; image: string; stderrTails: Map<string, string> },
): void {
  for (const line of describeAttemptFailure({
    attempt: event.attempt - 1,
    reason: event.reason,
    stderrTail: options.stderrTails.get(`${event.sample ?? 0}:${event.attempt - 1}`),
    image: options.image,
  }))
    options.progress.note(line);
  options.progress.update("waiting for the model");
}

/** How an attempt's program ended, with the tails of its output. */
function showProgramEnd(
  event: Extract<AgentEvent, { type: "program-end" }>,
  show: (text: string) => void,
): void {
  show(`attempt ${event.attempt}: ${event.status}, exit ${event.exitCode ?? "none"}`);
  if (event.stdoutTail.trim()) show(`stdout:\n${indent(escapeForTerminal(event.stdoutTail.trimEnd()))}`);
  if (event.stderrTail.trim()) show(`stderr:\n${indent(escapeForTerminal(event.stderrTail.trimEnd()))}`);
}

function hasTimings<T extends { timings?: Attempt["timings"] }>(
  attempt: T,
): attempt is T & Pick<Attempt, "timings"> {
  return attempt.timings !== undefined;
}

function showTimings(
  attempts: readonly Pick<Attempt, "attempt" | "status" | "timings">[],
  context: CliContext,
): void {
  for (const attempt of attempts) {
    const { modelMs, containerStartMs, runMs, totalMs } = attempt.timings;
    context.stderr.write(
      `timings, attempt ${attempt.attempt} (${attempt.status}): model ${seconds(modelMs)}, container start ${seconds(containerStartMs)}, run ${seconds(runMs)}, total ${seconds(totalMs)}\n`,
    );
  }
}

function seconds(milliseconds: number): string {
  return `${(milliseconds / 1000).toFixed(2)} s`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/**
 * A short description of a tool result: "500 items", "a dict with 3 keys", or its start. A big
 * result is kept by the bridge as a preview with its length, which still says how many.
 */
function summarize(event: {
  result?: unknown;
  resultPreview?: string;
  resultLength?: number;
  error?: string;
}): string {
  const { result, resultPreview, resultLength } = event;
  if (result === undefined && resultPreview !== undefined && resultLength !== undefined) {
    return resultPreview.startsWith("[") ? items(resultLength) : `a dict with ${resultLength} keys`;
  }
  const value = result ?? (resultPreview === undefined ? event.error : `${resultPreview}...`);
  if (Array.isArray(value)) return items(value.length);
  if (value && typeof value === "object") return `a dict with ${Object.keys(value).length} keys`;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const line = escapeForTerminal(text ?? "nothing", { keepNewlines: false });
  return line.length > 100 ? `${line.slice(0, 100)}...` : line;
}

function items(count: number): string {
  return `${count} item${count === 1 ? "" : "s"}`;
}

export type { RunRecord };
