import { resolve } from "node:path";
import type { ProgramRunner, ProgramRunResult } from "@codeaction/core";
import type { ProgramJobs } from "@codeaction/core/mcp-server";
import { DATA_IMAGE, DEFAULT_IMAGE } from "@codeaction/sandbox/images";
import { numberOption, parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { readTokenFile } from "../listener/http-token.ts";
import { type LoadedTools, loadTools } from "../load-tools.ts";
import { approvalRules, offeredTools } from "../mcp-server/approval-rules.ts";
import { offeredRunner } from "../mcp-server/offered-runner.ts";
import { runnerOptionDefinitions, runnerSettings, runnerTools } from "../program/runner-options.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";
import { untilStopped } from "../until-stopped.ts";

/** A program's time limit unless --timeout says otherwise: inside the 60 s stock MCP clients wait. */
export const defaultTimeoutSeconds = 50;

export const mcpHelp = `Usage: codeaction mcp --server "CMD"... [--csv FILE]... [--http PORT] [options]

Serves code mode to any MCP client (Claude Desktop, Cursor, an agent of your own): this command is
an MCP server that wraps the given servers and offers two tools:
  list_functions   { query?, limit? }: the Python stubs of the wrapped tools, as a code-action
                   model sees them; with a query only the best matches, ranked; above 40 tools
                   (or ~4,000 tokens of stubs) without one, an index of their names
  run_program      { program }: runs the program in a fresh sandbox with the wrapped tools bridged;
                   returns its RESULT as text and, as structured content, the result, stdout,
                   stderr and each tool call; an error result when the program fails
Every sandbox default applies to each program (no network, 50 tool calls, 1 MiB of output) but the
time limit: 50 s, inside the 60 s stock MCP clients wait for an answer. While a program runs the
server sends progress notifications to a client that asked (a progressToken): a client resetting
its timeout on progress can wait for longer programs (--timeout).
Serves over stdio (the default) or Streamable HTTP at http://HOST:PORT/mcp (stateless; every request
needs "Authorization: Bearer TOKEN").
Logs go to stderr.

Options:
  --server "CMD"        an MCP server to wrap: a command line (stdio) or an http(s) URL (repeatable)
  --csv FILE            a CSV file to offer as load_<name>() (repeatable)
  --file FILE           a data file by extension: .csv .tsv .json (an array of records) .jsonl
                        .xlsx (first sheet) .parquet; becomes load_<name>() like --csv (repeatable)
  --http PORT           serve Streamable HTTP on this port instead of stdio (0: any free port)
  --host HOST           the address to listen on with --http (default 127.0.0.1, loopback only;
                        any other bind is warned about)
  --token-file FILE     the bearer token clients must send with --http (default: a new random
                        token, printed on stderr and written to ~/.codeaction/mcp/http-PORT.token)
  --allow TOOL          only these tools may run (repeatable; a tool's own or its Python name)
  --deny TOOL           this tool may not run (repeatable; wins over --allow); a denied call
                        raises ToolDenied in the program
  --timeout SECONDS     each program's time limit (default 50)
  --max-tool-calls N    tool calls per program (default 50)
  --image NAME          the sandbox image (default ${DEFAULT_IMAGE})
  --data                the data image, ${DATA_IMAGE} (numpy, pandas)
  --debug               show stack traces
  -h, --help            show this help

Claude Desktop (claude_desktop_config.json), with npx fetching the command on first use:
  { "mcpServers": { "memory-code": { "command": "npx",
      "args": ["-y", "@codeaction/cli", "mcp", "--server", "npx -y @modelcontextprotocol/server-memory"] } } }`;

export async function mcpCommand(args: string[], context: CliContext): Promise<number> {
  const command = "mcp";
  const parsed = parseMcpArguments(args);
  if (parsed === "help") {
    context.stdout.write(`${mcpHelp}\n`);
    return 0;
  }
  const { values, port, settings } = parsed;
  // Read before anything starts, so a bad --token-file fails at once.
  const tokenFile = values["token-file"];
  const token =
    tokenFile === undefined ? undefined : await readTokenFile(resolve(context.cwd, tokenFile), command);

  // Progress never touches stdout: over stdio it carries JSON-RPC only.
  const progress = createProgress({ stream: context.stderr, interactive: false, prefix: "codeaction mcp" });
  const loaded = await loadTools(runnerTools(command, values, context.cwd), progress);
  let runner: ProgramRunner | undefined;
  const jobs = new (await import("@codeaction/core/mcp-server")).ProgramJobs();
  try {
    const rules = { allow: values.allow ?? [], deny: values.deny ?? [] };
    const approval = approvalRules(loaded.tools, rules, command);
    const { createProgramRunner, defaultSandboxDescription } = await import("@codeaction/core");
    progress.update("checking the Docker sandbox");
    runner = await createProgramRunner({
      tools: loaded.tools,
      ...settings,
      // run_program's `thread`: live interpreters kept between a client's calls, bounded.
      threads: { maxThreads: 8, idleSeconds: 600 },
      ...(approval ? { approval } : {}),
    });
    const serve = {
      // Denied tools are not offered: neither named in run_program's description nor listed.
      runner: offeredRunner(runner, offeredTools(loaded.tools, rules, command)),
      loaded,
      context,
      sandboxDescription: describeImage(values, defaultSandboxDescription),
      // Programs started by start_program, shared by every connection of this process.
      jobs,
    };
    if (port === undefined) await serveStdio(serve);
    else
      await serveHttpUntilStopped({
        ...serve,
        host: values.host ?? "127.0.0.1",
        port,
        token,
      });
  } finally {
    await jobs.close();
    await runner?.close().catch(() => undefined);
    await loaded.close();
  }
  return 0;
}

/** The command line as mcp's options, the HTTP port (undefined: stdio) and the runner's settings. */
function parseMcpArguments(args: string[]) {
  const command = "mcp";
  const { values, positionals } = parseCommandArguments(command, args, {
    ...runnerOptionDefinitions,
    http: { type: "string" },
    host: { type: "string" },
    "token-file": { type: "string" },
    allow: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
  });
  if (values.help) return "help";
  if (positionals.length > 0)
    throw new UsageError({ command, message: `unexpected argument ${JSON.stringify(positionals[0])}` });
  if (
    (values.server ?? []).length === 0 &&
    (values.csv ?? []).length === 0 &&
    (values.file ?? []).length === 0
  )
    throw new UsageError({
      command,
      message: 'give the tools to serve: --server "CMD", --csv FILE or --file FILE',
    });
  const port = numberOption(command, "http", values.http, { minimum: 0, maximum: 65_535 });
  if (port !== undefined && !Number.isInteger(port))
    throw new UsageError({ command, message: "--http must be a whole port number" });
  for (const option of ["host", "token-file"] as const) {
    if (values[option] !== undefined && port === undefined)
      throw new UsageError({ command, message: `--${option} goes with --http PORT` });
  }
  const settings = runnerSettings(command, values);
  return {
    values,
    port,
    settings: { ...settings, execTimeout: settings.execTimeout ?? defaultTimeoutSeconds },
  };
}

type Serve = {
  runner: ProgramRunner;
  loaded: LoadedTools;
  context: CliContext;
  sandboxDescription: string;
  jobs: ProgramJobs;
};

function describeImage(values: { image?: string; data?: boolean }, standard: string): string {
  if (values.data) return "Python 3.11 with numpy and pandas, and no network";
  if (values.image !== undefined) return `the image ${values.image}, with no network`;
  return standard;
}

function logRun(context: CliContext): (run: ProgramRunResult) => void {
  return (run) => {
    const detail = run.infrastructureError
      ? `: ${escapeForTerminal(run.infrastructureError, { keepNewlines: false })}`
      : "";
    context.stderr.write(
      `codeaction mcp: run_program ${run.runId}: ${run.status}, exit ${run.exitCode ?? "none"}, ${run.toolCalls.length} tool calls, ${Math.round(run.runMs)} ms${detail}\n`,
    );
  };
}

/** Serves one client on stdin/stdout until stdin ends or the process is told to stop. */
async function serveStdio(serve: Serve): Promise<void> {
  const [{ StdioServerTransport }, { createCodeModeServer, createRunAdmission, maxServerRuns }] =
    await Promise.all([
      import("@modelcontextprotocol/sdk/server/stdio.js"),
      import("@codeaction/core/mcp-server"),
    ]);
  const transport = new StdioServerTransport(process.stdin, serve.context.stdout as NodeJS.WriteStream);
  // The one client is the whole server: it may have the server's runs, no more (each holds its program).
  const admission = createRunAdmission({ perConnection: maxServerRuns });
  const server = createCodeModeServer({
    ...serve,
    onRun: logRun(serve.context),
    admit: admission.forConnection(transport),
    // The client's answer to a ping comes back on this one connection (not so over stateless HTTP).
    confirmDelivery: true,
  });
  const stopped = untilStopped({ streams: [process.stdin] });
  await server.connect(transport);
  serve.context.stderr.write(
    `codeaction mcp: serving ${serve.runner.tools.length} functions over stdio (list_functions, run_program, start_program, program_result)\n`,
  );
  await stopped;
  await server.close().catch(() => undefined);
}

/** Serves Streamable HTTP (mcp-server/serve-http.ts) until the process is told to stop. */
async function serveHttpUntilStopped(
  serve: Serve & { host: string; port: number; token: string | undefined },
): Promise<void> {
  const [{ serveHttp }, { createCodeModeServer, createRunAdmission }] = await Promise.all([
    import("../mcp-server/serve-http.ts"),
    import("@codeaction/core/mcp-server"),
  ]);
  const admission = createRunAdmission();
  await serveHttp({
    host: serve.host,
    port: serve.port,
    token: serve.token,
    functionCount: serve.runner.tools.length,
    context: serve.context,
    createServer: (request) =>
      createCodeModeServer({
        ...serve,
        onRun: logRun(serve.context),
        admit: admission.forConnection(request.socket),
      }),
    stopped: untilStopped().then((reason) => {
      if (reason === "parent-exited") {
        serve.context.stderr.write("codeaction mcp: the process that started it has ended; stopping\n");
      }
    }),
  });
}
