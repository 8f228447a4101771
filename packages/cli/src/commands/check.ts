import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { terminalSafeJson } from "../journal/journal-record.ts";
import { loadTools } from "../load-tools.ts";
import { createProgress } from "../terminal/progress.ts";

export const checkHelp = `Usage: codeaction check --server "CMD"... [--call [--args TOOL=JSON]...] [--json]

Checks that an MCP server's tools are ready for programs, the way a code-action program meets them.
Per tool, in a table, with a verdict (ready, needs work, broken) and a fix for each finding:
  types          the stub types every argument (no Any where the schema could say more)
  name           the tool's Python name, and whether it had to change or clashes
  outputSchema   declared, so a program knows what comes back
  descriptions   for the tool and for every argument
With --call, each tool the schema gives example arguments for (its "examples", or an example,
const, default or enum value for every required argument) is called:
  structuredContent   validates against the declared outputSchema
  errors              a wrongly typed argument comes back as an isError result with a message,
                      which a program reads as ToolError(message)
Tools without example arguments are not called (a check never guesses arguments for a tool that
may change things). Starts no container. Exits 1 when a tool is broken, else 0.

Options:
  --server "CMD"    an MCP server: a command line (stdio) or an http(s) URL (repeatable)
  --call            call the tools that have example arguments
  --args TOOL=JSON  example arguments for a tool, such as 'search_nodes={"query":"Ada"}' (repeatable;
                    implies --call)
  --json            print the report as JSON (for CI)
  --debug           show stack traces
  -h, --help        show this help`;

export async function checkCommand(args: string[], context: CliContext): Promise<number> {
  const command = "check";
  const { values, positionals } = parseCommandArguments(command, args, {
    server: { type: "string", multiple: true },
    call: { type: "boolean" },
    args: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  if (values.help) {
    context.stdout.write(`${checkHelp}\n`);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError({ command, message: `unexpected argument ${JSON.stringify(positionals[0])}` });
  if ((values.server ?? []).length === 0)
    throw new UsageError({ command, message: 'give the server to check: --server "CMD"' });
  const givenArguments = parseGivenArguments(values.args ?? [], command);

  const progress = createProgress({ stream: context.stderr });
  const loaded = await loadTools(
    { csv: [], servers: values.server ?? [], command, cwd: context.cwd },
    progress,
  );
  try {
    const { checkTools, renderReport } = await import("../check/readiness-report.ts");
    progress.update(
      values.call || givenArguments.size > 0 ? "checking and calling the tools" : "checking the tools",
    );
    const reports = await checkTools(loaded.tools, {
      call: values.call === true || givenArguments.size > 0,
      givenArguments,
    });
    progress.stop();
    const unknown = [...givenArguments.keys()].filter(
      (name) => !reports.some((report) => report.tool === name || report.function === name),
    );
    if (unknown.length > 0) {
      throw new UsageError({
        command,
        message: `--args names no tool: ${unknown.join(", ")}; the tools are: ${reports.map((report) => report.tool).join(", ")}`,
      });
    }
    context.stdout.write(
      `${values.json ? terminalSafeJson({ tools: reports }, 2) : renderReport(reports)}\n`,
    );
    return reports.some((report) => report.verdict === "broken") ? 1 : 0;
  } finally {
    progress.stop();
    await loaded.close();
  }
}

/** `TOOL=JSON` pairs; the JSON must be an object of arguments. */
function parseGivenArguments(pairs: string[], command: string): Map<string, Record<string, unknown>> {
  const given = new Map<string, Record<string, unknown>>();
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    let value: unknown;
    try {
      value = at > 0 ? JSON.parse(pair.slice(at + 1)) : undefined;
    } catch {
      value = undefined;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new UsageError({
        command,
        message: `--args must be TOOL={...} with a JSON object of arguments, got ${JSON.stringify(pair)}`,
      });
    }
    given.set(pair.slice(0, at), value as Record<string, unknown>);
  }
  return given;
}
