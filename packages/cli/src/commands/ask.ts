import { basename, resolve } from "node:path";
import type { ServerSpec } from "@codeaction/core";
import { DATA_IMAGE as dataImage, DEFAULT_IMAGE as defaultImage } from "@codeaction/sandbox/images";
import { SandboxPrelaunch } from "@codeaction/sandbox/prelaunch";
import type { CliContext } from "../context.ts";
import { type DataFileArgument, dataFileArguments } from "../data-files/data-formats.ts";
import { type ScanJob, scanInThreads } from "../data-files/scan-thread.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { chooseModel, describeModelChoice, type ModelChoice } from "../model-choice.ts";
import { loadModel } from "../model-load.ts";
import { createRunRecord } from "../run-record.ts";
import { serverCommandLines, serverSpecs } from "../server-options.ts";
import { createProgress, describeCopy } from "../terminal/progress.ts";
import { type ResumeRequest, resumeSecret, terminalApprovalFor } from "./ask-approval.ts";
import { type AskRequest, parseAskArguments } from "./ask-arguments.ts";
import {
  agentModules,
  askSandbox,
  buildAskAgent,
  filesExist,
  filesToPlace,
  logScans,
  openSandbox,
  type SandboxHolder,
  worthAWorker,
} from "./ask-sandbox.ts";
import { askOnce, reportAnswer } from "./ask-turn.ts";

// Only what checking the command line needs is imported up front; LangChain, the sandbox and the
// CSV parser load once the arguments are known to be good.

/** `codeaction ask`; with `resume`, `codeaction resume` continuing a kept run with the same options. */
export async function askCommand(
  args: string[],
  context: CliContext,
  resume?: ResumeRequest,
): Promise<number> {
  const request = parseAskArguments(args, context);
  if (!request) return 0;
  const { values, pattern } = request;
  const image =
    pattern === "code-action" ? (values.image ?? (values.data ? dataImage : defaultImage)) : undefined;
  const servers = await serverSpecs(values.server ?? [], "ask", context.cwd);
  const modelChoice = await chooseModel({
    model: values.model,
    replay: values.replay,
    env: context.env,
    cwd: context.cwd,
    ...(resume ? { resuming: resume.runId } : {}),
  });
  // The sandbox's container starts in a worker thread now, while LangChain and the data load here
  // (not when a data file is missing: that error comes next, and needs no container).
  const files = dataFileArguments({ csv: values.csv, file: values.file }, context.cwd);
  const prelaunch =
    image !== undefined && worthAWorker(files) && (await filesExist(files.map((file) => file.path)))
      ? SandboxPrelaunch.start(askSandbox(image), { files: filesToPlace(files) })
      : undefined;
  // The data files are scanned in worker threads meanwhile, too.
  const scans = scanInThreads(files);
  const sandbox: SandboxHolder = { prelaunch };
  try {
    return await askWithSandbox({
      request,
      context,
      servers,
      modelChoice,
      image,
      sandbox,
      files,
      scans,
      resume,
    });
  } finally {
    // The manager removes its containers; without one (a failure before the agent was built) the
    // prelaunch removes its container.
    sandbox.ended = true;
    await (sandbox.manager?.close() ?? prelaunch?.close());
  }
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
  resume: ResumeRequest | undefined;
}): Promise<number> {
  const { request, context, servers, modelChoice, image, sandbox, files, scans, resume } = options;
  const { values, question, pattern } = request;
  const { loadDataFiles } = await import("../data-files/csv-tools.ts");
  // Against the command's folder (main()'s context), as chat, resume, replay and audit verify do.
  const journalPath = values["no-journal"]
    ? undefined
    : resolve(context.cwd, values.journal ?? defaultJournalPath);
  const { progress, modules, modelLoad } = beginLoading({ request, context, modelChoice, image, sandbox });
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
  const turn = { request, context, progress, record, journalPath, started, resume };
  const approval = terminalApprovalFor(request, context, {
    journaled: journalPath !== undefined,
    resuming: resume !== undefined,
    progress,
  });
  const result = await askOnce(turn, async () => {
    progress.update(pattern === "code-action" ? "checking the Docker sandbox" : "preparing the tools");
    const loaded = await modules;
    logScans(sandbox.logger, scans);
    const agent = await buildAskAgent({
      request,
      model,
      csv,
      servers,
      sandbox,
      modules: loaded,
      approval: approval?.hook,
      resumeSecret: resumeSecret(context.env),
      usedStates: resume?.usedStates,
    });
    record.timings.setupMs = Math.round(performance.now() - started);
    return agent;
  }).finally(() => {
    approval?.close();
    return csv.close();
  });
  return reportAnswer(turn, result);
}

/**
 * Starts what loads while the data files are read: the progress line, LangChain and the agent's
 * modules (opening the sandbox once they are in), and the model. Their failures are reported when
 * they are awaited.
 */
function beginLoading(options: {
  request: AskRequest;
  context: CliContext;
  modelChoice: ModelChoice;
  image: string | undefined;
  sandbox: SandboxHolder;
}) {
  const { request, context, modelChoice, image, sandbox } = options;
  const { values } = request;
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
    wait: context.wait,
    timeoutSeconds: request.modelTimeout,
  });
  for (const pending of [modules, modelLoad]) pending.catch(() => {});
  return { progress, modules, modelLoad };
}
