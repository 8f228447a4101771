import { renderStubSignatures } from "@codeaction/core/stubs";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { loadTools } from "../load-tools.ts";
import { loadModuleTools } from "../module-tools.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const toolsHelp = `Usage: codeaction tools [--csv FILE]... [--server "CMD"]... [--module FILE]...

Prints the Python stubs a code-action program would see for these tools: one typed function per
CSV loader, per MCP tool and per LangChain tool of a module, with the docstring the model reads
(what agent.describeTools() returns). Starts no container.

Options:
  --csv FILE      a CSV file; becomes load_<name>() (repeatable)
  --file FILE     a .csv .tsv .json .jsonl .xlsx or .parquet file, the same way (repeatable)
  --server "CMD"  an MCP server started with this command line over stdio, or an http(s) URL
                  (repeatable)
  --module FILE   a JavaScript module (or TypeScript, on Node 22.18+) exporting LangChain tools:
                  each exported tool(), and the tools of an exported array (repeatable)
  --debug         show stack traces
  -h, --help      show this help`;

export async function toolsCommand(args: string[], context: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArguments("tools", args, {
    csv: { type: "string", multiple: true },
    file: { type: "string", multiple: true },
    server: { type: "string", multiple: true },
    module: { type: "string", multiple: true },
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
      {
        csv: values.csv ?? [],
        file: values.file ?? [],
        servers: values.server ?? [],
        command: "tools",
        cwd: context.cwd,
      },
      progress,
    );
    for (const path of values.module ?? []) {
      const { fromLangChainTool } = await import("@codeaction/core");
      const moduleTools = await loadModuleTools(path, context.cwd).catch(async (error: unknown) => {
        await loaded.close();
        throw error;
      });
      loaded.tools.push(...moduleTools.map((tool) => fromLangChainTool(tool)));
    }
    try {
      progress.stop();
      if (loaded.tools.length === 0) {
        context.stderr.write(
          'codeaction: no tools: pass --csv FILE, --file FILE, --server "CMD" or --module FILE to see their stubs\n',
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
