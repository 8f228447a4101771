import type { ToolSpec } from "@codeaction/core";
import type { CsvTable } from "./data-files/csv-table.ts";
import { dataFileArguments } from "./data-files/data-formats.ts";
import { serverSpecs } from "./server-options.ts";
import type { Progress } from "./terminal/progress.ts";

export type LoadedTools = {
  /** CSV loaders first, then every MCP tool (renamed `<server>_<tool>` on a clash). */
  tools: ToolSpec[];
  tables: CsvTable[];
  /** Closes the MCP connections and ends their server processes. */
  close(): Promise<void>;
};

/**
 * The tools of `--csv FILE`, `--file FILE` and `--server "CMD"` options as ToolSpecs, as every command that runs
 * or shows programs sees them (`tools`, `run`, `mcp`). Server command lines are checked before
 * any file is read or any server starts.
 */
export async function loadTools(
  options: {
    csv: string[];
    file?: string[];
    servers: string[];
    command: string;
    /** The command's folder (CliContext.cwd): relative files and server commands are its. */
    cwd: string;
  },
  progress?: Progress,
): Promise<LoadedTools> {
  const servers = await serverSpecs(options.servers, options.command, options.cwd);
  const [{ connectServers, fromLangChainTool }, { loadCsvTools, loadDataFiles }] = await Promise.all([
    import("@codeaction/core"),
    import("./data-files/csv-tools.ts"),
  ]);
  const files = dataFileArguments(options, options.cwd);
  const csv = await (progress ? loadDataFiles(files, progress) : loadCsvTools(files));
  const tools: ToolSpec[] = csv.tools.map((tool) => fromLangChainTool(tool, "csv"));
  if (Object.keys(servers).length === 0) return { tools, tables: csv.tables, close: async () => {} };
  progress?.update(`connecting ${Object.keys(servers).join(", ")}`);
  const connected = await connectServers(servers, { existingToolNames: tools.map((tool) => tool.name) });
  tools.push(...connected.tools);
  return { tools, tables: csv.tables, close: connected.close };
}
