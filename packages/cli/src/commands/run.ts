import type { AgentEvent, ProgramRunResult } from "@codeaction/core";
import { DATA_IMAGE, DEFAULT_IMAGE } from "@codeaction/sandbox/images";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { loadTools } from "../load-tools.ts";
import { describeToolCall } from "../program/describe-tool-call.ts";
import { readProgramFile } from "../program/read-program.ts";
import { runnerOptionDefinitions, runnerSettings, runnerTools } from "../program/runner-options.ts";
import { createTerminalApproval } from "../program/terminal-approval.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const runHelp = `Usage: codeaction run FILE.py [--server "CMD"]... [--csv FILE]... [options]

Runs a Python program you wrote in the sandbox exactly as a code-action turn runs a model's: the
same stubs of your tools in \`codeaction_tools\` (also imported for you), the same bridge, the same
caps (120 s, 50 tool calls, 1 MiB of output per stream), no network. No model is involved.
Prints the program's stdout on stdout; on stderr each tool call (arguments, status, duration, the
start of the result), the program's stderr, and a last line with how it ended and its RESULT.
Exits 0 when the program exited 0 with a RESULT line (what a turn counts as an answer), else 1.

Options:
  --server "CMD"        an MCP server started with this command line (stdio), or an http(s) URL
                        (repeatable)
  --csv FILE            a CSV file; becomes load_<name>() (repeatable)
  --file FILE           a data file by extension: .csv .tsv .json (an array of records) .jsonl
                        .xlsx (first sheet) .parquet; becomes load_<name>() like --csv (repeatable)
  --approve             ask on the terminal before each tool call (default: every call runs)
  --timeout SECONDS     the program's time limit (default 120)
  --max-tool-calls N    tool calls the program may make (default 50)
  --image NAME          the sandbox image (default ${DEFAULT_IMAGE})
  --data                the data image, ${DATA_IMAGE} (numpy, pandas)
  --quiet               no progress on stderr
  --debug               show stack traces
  -h, --help            show this help

Example:
  codeaction run check_weather.py --server "npx -y @modelcontextprotocol/server-everything"`;

export async function runCommand(args: string[], context: CliContext): Promise<number> {
  const command = "run";
  const { values, positionals } = parseCommandArguments(command, args, {
    ...runnerOptionDefinitions,
    approve: { type: "boolean" },
    quiet: { type: "boolean" },
  });
  if (values.help) {
    context.stdout.write(`${runHelp}\n`);
    return 0;
  }
  const [file, ...extra] = positionals;
  if (file === undefined) throw new UsageError({ command, message: "give the Python file to run" });
  if (extra.length > 0)
    throw new UsageError({ command, message: `unexpected argument ${JSON.stringify(extra[0])}` });
  const settings = runnerSettings(command, values);
  const terminal = process.stdin.isTTY === true;
  if (values.approve && !terminal) {
    throw new UsageError({
      command,
      message:
        "--approve asks on a terminal, and stdin is not one: run it in a terminal, or leave --approve out",
    });
  }
  const program = await readProgramFile(file, context.cwd);

  const progress = createProgress({ stream: context.stderr, quiet: values.quiet === true });
  const loaded = await loadTools(runnerTools(command, values, context.cwd), progress);
  const approval = values.approve ? createTerminalApproval(context.stderr) : undefined;
  let run: ProgramRunResult;
  try {
    const { createProgramRunner } = await import("@codeaction/core");
    progress.update("checking the Docker sandbox");
    const runner = await createProgramRunner({
      tools: loaded.tools,
      ...settings,
      ...(approval ? { approval: approval.hook } : {}),
    });
    try {
      progress.update(`running ${file}`);
      run = await runner.run(program, { onEvent: toolCallPrinter(context, () => progress.stop()) });
    } finally {
      progress.stop();
      await runner.close();
    }
  } finally {
    progress.stop();
    approval?.close();
    await loaded.close();
  }
  writeOutput(context, run);
  return run.status === "ok" ? 0 : 1;
}

/** Prints each tool call when its result comes back (the arguments are kept until then). */
function toolCallPrinter(context: CliContext, beforePrint: () => void): (event: AgentEvent) => void {
  const pending = new Map<string, { args: unknown; argsPreview?: string }>();
  return (event) => {
    if (event.type === "tool-call") {
      pending.set(event.id, {
        args: event.args,
        ...(event.argsPreview === undefined ? {} : { argsPreview: event.argsPreview }),
      });
    }
    if (event.type !== "tool-result") return;
    const call = pending.get(event.id) ?? { args: {} };
    pending.delete(event.id);
    beforePrint();
    context.stderr.write(`${describeToolCall({ ...event, ...call })}\n`);
  };
}

function writeOutput(context: CliContext, run: ProgramRunResult): void {
  context.stdout.write(escapeForTerminal(run.stdout));
  if (run.stdout && !run.stdout.endsWith("\n")) context.stdout.write("\n");
  if (run.stderr) {
    context.stderr.write(escapeForTerminal(run.stderr));
    if (!run.stderr.endsWith("\n")) context.stderr.write("\n");
  }
  context.stderr.write(`${describeRun(run)}\n`);
}

const statusText: Record<ProgramRunResult["status"], string> = {
  ok: "ok",
  error: "failed",
  timeout: "timed out; the program and everything it started were killed",
  oom: "killed by the kernel for going over its memory limit",
  "no-result": "no RESULT line: a code-action turn would count this as a failed attempt",
  "tool-limit": "stopped at the tool-call limit",
  infrastructure: "the sandbox failed",
  aborted: "cancelled; the program was killed",
};

/** `[run] ok, exit 0, 2 tool calls, 1.3 s. RESULT: 42` */
export function describeRun(run: ProgramRunResult): string {
  const calls = `${run.toolCalls.length} tool call${run.toolCalls.length === 1 ? "" : "s"}`;
  const parts = [
    statusText[run.status],
    `exit ${run.exitCode ?? "none"}`,
    calls,
    `${(run.runMs / 1000).toFixed(1)} s`,
  ];
  if (run.truncated) parts.push("output truncated");
  if (run.infrastructureError)
    parts.push(escapeForTerminal(run.infrastructureError, { keepNewlines: false }));
  const result =
    run.result === undefined ? "" : `. RESULT: ${escapeForTerminal(run.result, { keepNewlines: false })}`;
  return `[run] ${parts.join(", ")}${result}`;
}
