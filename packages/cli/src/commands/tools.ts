import { renderStubSignatures } from "@codeaction/core/internal";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { loadTools } from "../load-tools.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const toolsHelp = `Usage: codeaction tools [--csv FILE]... [--server "CMD"]...

Prints the Python stubs a code-action program would see for these tools: one typed function per
CSV loader and per MCP tool, with the docstring the model reads. Starts no container.

Options:
  --csv FILE      a CSV file; becomes load_<name>() (repeatable)
  --file FILE     a .csv .tsv .json .jsonl .xlsx or .parquet file, the same way (repeatable)
  --server "CMD"  an MCP server started with this command line over stdio, or an http(s) URL
                  (repeatable)
  --debug         show stack traces
  -h, --help      show this help`;

export async function toolsCommand(args: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments("tools", args, {
    csv: { type: "string", multiple: true },
    file: { type: "string", multiple: true },
    server: { type: "string", multiple: true },
  });
  if (values.help) {
    context.stdout.write(`${toolsHelp}\n`);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError({
      command: "tools",
      message: `unexpected argument ${JSON.stringify(positionals[0])}`,
    });
  }
  const progress = createProgress({ stream: context.stderr });
  try {
    const loaded = await loadTools(
      { csv: values.csv ?? [], file: values.file ?? [], servers: values.server ?? [], command: "tools" },
      progress,
    );
    try {
      progress.stop();
      if (loaded.tools.length === 0) {
        context.stderr.write(
          'codeaction: no tools: pass --csv FILE, --file FILE or --server "CMD" to see their stubs\n',
        );
        return 0;
      }
      context.stdout.write(`${escapeForTerminal(renderStubSignatures(loaded.tools).trimEnd())}\n`);
    } finally {
      await loaded.close();
    }
  } finally {
    progress.stop();
  }
  return 0;
}
