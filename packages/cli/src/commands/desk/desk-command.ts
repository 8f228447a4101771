import { spawn } from "node:child_process";
import { readdir } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { DATA_IMAGE, DEFAULT_IMAGE } from "@codeaction/sandbox/images";
import { parseCommandArguments } from "../../arguments.ts";
import type { CliContext } from "../../context.ts";
import {
  type DataFileArgument,
  dataFileArguments,
  supportedExtensions,
} from "../../data-files/data-formats.ts";
import { UsageError } from "../../errors/usage-error.ts";
import { defaultJournalPath } from "../../journal/append.ts";
import { createToken } from "../../listener/http-token.ts";
import { describeModelChoice, modelCallSettings } from "../../model-choice.ts";
import {
  type AgentSession,
  type BuiltSession,
  buildSession,
  openAgentSession,
  reopenWithFiles,
} from "../../session/agent-session.ts";
import { planAgentSession, type SessionPlan } from "../../session/session-plan.ts";
import { type SessionState, scratchThreadStore, sessionState } from "../../session/session-state.ts";
import { createProgress, type Progress } from "../../terminal/progress.ts";
import { untilStopped } from "../../until-stopped.ts";
import { resumeSecret } from "../ask-approval.ts";
import { modelTimeoutOption, questionOptions, retriesOption } from "../question-options.ts";
import { describeError, isSandboxProblem } from "./desk-errors.ts";
import { listenDesk } from "./desk-server.ts";
import type { DeskSession } from "./desk-session.ts";

/** The desk's own upload folder, under the working folder, unless --uploads names another. */
const defaultUploadFolder = "codeaction-uploads";

export const deskHelp = `Usage: codeaction desk [options]

The analyst's desk in a browser: a local page where you ask questions over your data files and see
each answer as a table (or text), with its charts, files, program and tool calls. It serves on
127.0.0.1 only, at an address with a random token (printed on start); the page keeps the token in
an HttpOnly cookie. Follow-up questions continue the conversation; "New conversation" starts over.

Options:
  --csv FILE, --file FILE   data files, as for codeaction ask (repeatable)
  --folder DIR              every data file in DIR (${supportedExtensions.join(" ")})
  --server "CMD"            an MCP server (a command line, or an http(s) URL); its tools join the
                            data files' tools, as for codeaction ask (repeatable)
  --data                    the data image (numpy, pandas, matplotlib)
  --image NAME              the sandbox image
  --model M, --replay FILE  the model, as for codeaction ask
  --retries N               try a failed model call again up to N times (default 2; 0 for never)
  --model-timeout S         seconds one model call may take (default 90)
  --uploads DIR             where files dropped on the page go (default ./${defaultUploadFolder});
                            the data files in it join the desk's at the start
  --out DIR                 where the files programs save go: DIR/<runId>/ (default ./codeaction-out)
  --journal PATH            the run journal (default ${defaultJournalPath}); --no-journal: none
  --port N                  the port (default: a free one)
  --steps N                 up to N programs a question, each seeing the last one's output (default 1)
  --no-state                a fresh interpreter for every question; by default a conversation keeps
                            one live interpreter, so a follow-up finds what earlier programs loaded
                            ("New conversation" drops it; kept signed under .codeaction/threads
                            when CODEACTION_RESUME_SECRET is set, else in a temporary folder of
                            the desk's own until it stops, so an upload keeps it too)
  --quiet                   no progress on stderr while the data files are read
  --open                    open the page in the browser (xdg-open or open), with a login address
                            good once and for a minute (never the token)
  -h, --help                show this help`;

/** The options of `ask` that make sense on a page (not --format: the page shows the answer), and the desk's own. */
const { format: _format, ...sharedOptions } = questionOptions;

export const deskOptions = {
  ...sharedOptions,
  folder: { type: "string" },
  port: { type: "string" },
  open: { type: "boolean" },
  journal: { type: "string" },
  "no-journal": { type: "boolean" },
  uploads: { type: "string" },
  "no-state": { type: "boolean" },
} as const;

export async function deskCommand(args: string[], context: CliContext): Promise<number> {
  const command = "desk";
  const { values } = parseCommandArguments(command, args, deskOptions);
  if (values.help) {
    context.stdout.write(`${deskHelp}\n`);
    return 0;
  }
  if (values.image !== undefined && values.data) {
    throw new UsageError({ command, message: "--image and --data cannot be combined" });
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError({
      command,
      message: `--port must be a port number (0 to 65535), not ${values.port}`,
    });
  }
  const session = await openSession(values, context);
  const token = createToken();
  const listener = await listenDesk({ host: "127.0.0.1", port, token, session });
  context.stdout.write(`codeaction desk: ${listener.url}\n`);
  // Never the token on a command line (another local user reads it in /proc): a single-use nonce.
  if (values.open) openBrowser(listener.loginUrl());
  if ((await untilStopped()) === "parent-exited") {
    context.stderr.write("codeaction desk: the process that started it has ended; stopping\n");
  }
  await listener.close();
  await session.built?.close();
  await session.removeThreads?.();
  return 0;
}

type DeskValues = ReturnType<typeof parseCommandArguments<typeof deskOptions>>["values"];

/** The data files, the model and the agent (an agent session, as chat's): the desk's one session. */
async function openSession(values: DeskValues, context: CliContext): Promise<DeskSession> {
  const command = "desk";
  const uploadFolder = resolve(context.cwd, values.uploads ?? defaultUploadFolder);
  const files = await deskDataFiles(values, context.cwd, uploadFolder);
  const plan = await planAgentSession(values, context, { command });
  const progress = createProgress({ stream: context.stderr, quiet: values.quiet === true });
  progress.note(describeModelChoice(plan.modelChoice));
  const image = values.image ?? (values.data ? DATA_IMAGE : DEFAULT_IMAGE);
  const scratch = await scratchThreadStore(
    sessionState(command, values, { thread: true, cwd: context.cwd, secret: resumeSecret(context.env) }),
  );
  const { opened, built } = await openDeskAgent(values, context, {
    plan,
    files,
    image,
    progress,
    state: scratch.state,
  }).catch(async (error: unknown) => {
    await scratch.remove();
    throw error;
  });
  progress.stop();
  // The desk's agents share the session's model (a replay goes on with its next reply), servers and
  // image; each is built over the data files given: again after an upload, or after a failed start.
  const quietProgress = createProgress({ stream: context.stderr, quiet: true });
  const session: DeskSession = {
    built,
    files,
    // The same conversation goes on over the new files: its thread restored from the store.
    buildAgent: (rebuiltFiles) =>
      reopenWithFiles(opened, context, {
        files: rebuiltFiles,
        progress: quietProgress,
        threadId: (session.built ?? opened).threadId,
      }),
    uploadFolder,
    modelChoice: plan.modelChoice,
    modelCall: modelCallSettings(plan.modelChoice, {
      retries: retriesOption(command, values.retries),
      timeoutSeconds: modelTimeoutOption(command, values["model-timeout"]),
      model: values.model,
    }),
    image,
    servers: plan.serverLines,
    context,
    outRoot: resolve(context.cwd, values.out ?? "codeaction-out"),
    journalPath: values["no-journal"]
      ? undefined
      : resolve(context.cwd, values.journal ?? defaultJournalPath),
    messages: [],
    busy: false,
    removeThreads: scratch.remove,
  };
  return session;
}

/**
 * The desk's agent session, opened and its agent built. A sandbox that cannot start yet leaves the
 * agent unbuilt: the page still opens, and each question shows that with its fix and tries again.
 */
async function openDeskAgent(
  values: DeskValues,
  context: CliContext,
  options: {
    plan: SessionPlan;
    files: DataFileArgument[];
    image: string;
    progress: Progress;
    state: SessionState;
  },
): Promise<{ opened: AgentSession; built: BuiltSession | undefined }> {
  const command = "desk";
  const opened = await openAgentSession(options.plan, context, {
    pattern: "code-action",
    image: options.image,
    files: options.files,
    questions: "many",
    progress: options.progress,
    modelCall: () => ({
      retries: retriesOption(command, values.retries),
      timeoutSeconds: modelTimeoutOption(command, values["model-timeout"]),
    }),
    onRetry: (line) => context.stderr.write(`codeaction: ${line}\n`),
    modelLoad: "before-data",
    state: options.state,
  });
  const built = await buildSession(opened).catch((error: unknown) => {
    if (!isSandboxProblem(error)) throw error;
    context.stderr.write(`codeaction desk: the sandbox cannot start yet: ${describeError(error).message}\n`);
    return undefined;
  });
  return { opened, built };
}

/** --csv, --file, the files in --folder and what earlier uploads left, read from the command's folder. */
async function deskDataFiles(values: DeskValues, cwd: string, uploadFolder: string) {
  const folderFiles = values.folder ? await filesIn(resolve(cwd, values.folder)) : [];
  const file = [
    ...(values.file ?? []),
    ...folderFiles,
    // What earlier uploads left in the desk's own folder.
    ...(await filesIn(uploadFolder, { missingIsEmpty: true })),
  ];
  return dataFileArguments({ csv: values.csv, file }, cwd);
}

/** The data files directly in `folder`, by name (never a link). */
async function filesIn(folder: string, options: { missingIsEmpty?: boolean } = {}): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (options.missingIsEmpty && error.code === "ENOENT") return [];
    throw new UsageError({
      command: "desk",
      message: `--folder ${JSON.stringify(folder)} cannot be read (${error.code ?? error.message}); give a folder of data files`,
    });
  });
  return entries
    .filter((entry) => entry.isFile() && supportedExtensions.includes(extname(entry.name).toLowerCase()))
    .map((entry) => join(folder, entry.name))
    .sort();
}

function openBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : "xdg-open";
  spawn(opener, [url], { stdio: "ignore", detached: true })
    .on("error", () => undefined)
    .unref();
}
