import { readFileSync } from "node:fs";
import { cliAssets } from "./cli-assets.ts";
import type { CliContext } from "./context.ts";
import { CliError } from "./errors/cli-error.ts";
import { UsageError } from "./errors/usage-error.ts";
import { escapeForTerminal } from "./terminal/escape-for-terminal.ts";

export const mainHelp = `Usage: codeaction <command> [options]

Code-action agents: the model writes one Python program, the program runs in a Docker sandbox with
no network, and the answer is what the program prints.

Commands:
  ask "question"        answer a question over CSV files (--csv) and MCP tools (--server)
  chat                  an interactive session: follow-up questions see the earlier answers
  tools                 print the Python stubs a program would see
  run FILE.py           run your own program against your tools (--server, --csv), no model
  check --server "CMD"  check an MCP server's tools are ready for programs (a table, or --json)
  mcp --server "CMD"    serve code mode to any MCP client (stdio, or --http PORT)
  desk                  the analyst's desk in a browser: questions, tables, charts (local page)
  doctor                check Docker, its runtimes, the sandbox images and the limits
  image build           build the sandbox image (--data: with numpy, pandas, matplotlib)
  sandbox run FILE.py   run one Python program in a fresh sandbox and show how it ended
  replay [RUN_ID]       re-run a journaled ask's program with every tool answered from its log
  resume RUN_ID         continue a run ask --approve kept ("later"): --approve or --deny
  audit verify [FILE]   check the run journal's chain: names a changed, removed or reordered record

Options:
  -h, --help            show help (also after a command: codeaction ask --help)
  --version             print the version
  --debug               on errors, show the stack trace

Exit codes: 0 success, 1 failure, 2 usage error, 3 a run waits for a decision (ask --approve, "later").`;

type Command = (args: string[], context: CliContext) => Promise<number>;

// Each command is imported when it runs: `--help`, `--version` and usage errors start fast, and
// `doctor` does not load LangChain.
const commands: Record<string, () => Promise<Command>> = {
  ask: async () => (await import("./commands/ask.ts")).askCommand,
  chat: async () => (await import("./commands/chat.ts")).chatCommand,
  tools: async () => (await import("./commands/tools.ts")).toolsCommand,
  run: async () => (await import("./commands/run.ts")).runCommand,
  mcp: async () => (await import("./commands/mcp.ts")).mcpCommand,
  check: async () => (await import("./commands/check.ts")).checkCommand,
  doctor: async () => (await import("./commands/doctor.ts")).doctorCommand,
  replay: async () => (await import("./commands/replay.ts")).replayCommand,
  resume: async () => (await import("./commands/resume.ts")).resumeCommand,
  desk: async () => (await import("./commands/desk/desk-command.ts")).deskCommand,
};

const subcommands: Record<string, Record<string, () => Promise<Command>>> = {
  image: { build: async () => (await import("./commands/image-build.ts")).imageBuildCommand },
  sandbox: { run: async () => (await import("./commands/sandbox-run.ts")).sandboxRunCommand },
  audit: { verify: async () => (await import("./commands/audit-verify.ts")).auditVerifyCommand },
};

/** Runs the command line and resolves with the exit code. Never throws. */
export async function main(argv: string[], context: CliContext): Promise<number> {
  const debug = argv.includes("--debug");
  try {
    return await dispatch(argv, context);
  } catch (error) {
    reportError(error, context, { debug });
    return CliError.isInstance(error) ? error.exitCode : 1;
  }
}

async function dispatch(argv: string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    context.stdout.write(`${mainHelp}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version") {
    context.stdout.write(`${version()}\n`);
    return 0;
  }
  const command = commands[name];
  if (command) return (await command())(rest, context);
  const group = subcommands[name];
  if (group) {
    const [subName, ...subRest] = rest;
    const names = Object.keys(group).join(", ");
    if (subName === undefined || subName === "--help" || subName === "-h") {
      if (subName === undefined) {
        throw new UsageError({ message: `\`codeaction ${name}\` needs a subcommand: ${names}` });
      }
      return (await group[Object.keys(group)[0]!]!())(["--help"], context);
    }
    const subcommand = group[subName];
    if (!subcommand) {
      throw new UsageError({
        message: `unknown command \`codeaction ${name} ${subName}\` (known: ${names})`,
      });
    }
    return (await subcommand())(subRest, context);
  }
  throw new UsageError({ message: `unknown command ${JSON.stringify(name)}` });
}

/** One line (or a short block) on stderr; the stack and the causes only with --debug. */
function reportError(error: unknown, context: CliContext, options: { debug: boolean }): void {
  const message = error instanceof Error ? error.message : String(error);
  const known = CliError.isInstance(error) || hasStableCode(error);
  const text = known ? message : `unexpected error: ${message}`;
  context.stderr.write(`codeaction: ${escapeForTerminal(text)}\n`);
  if (options.debug) {
    let current: unknown = error;
    while (current instanceof Error) {
      context.stderr.write(`${escapeForTerminal(current.stack ?? String(current))}\n`);
      current = current.cause;
      if (current !== undefined) context.stderr.write("caused by: ");
    }
    if (current !== undefined && !(current instanceof Error)) context.stderr.write(`${String(current)}\n`);
  } else if (!known) {
    context.stderr.write("codeaction: run again with --debug for the stack trace\n");
  }
}

/** Errors of our packages (SandboxError, CodeActionError) carry a stable string `code`: their message is for users. */
function hasStableCode(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && !/^(E[A-Z0-9]+|ERR_[A-Z0-9_]+)$/.test(code);
}

function version(): string {
  const packageJson = JSON.parse(readFileSync(cliAssets.path("package.json"), "utf8")) as {
    version: string;
  };
  return packageJson.version;
}

/** The bin's entry: runs with the process's streams, then exits with the code once stdout is flushed. */
export async function run(argv: string[]): Promise<void> {
  const code = await main(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
  });
  // MCP servers, sockets and timers must not keep a finished command alive.
  process.stdout.write("", () => process.exit(code));
}
