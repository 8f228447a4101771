// Strict type-check of code mode served from a server of one's own (@codeaction/core/mcp-server),
// against the shipped declarations. Its own tsconfig adds DOM's lib: the MCP SDK's declarations,
// which createCodeModeServer's `Server` brings in, name fetch's HeadersInit, which @types/node 22
// does not declare (with skipLibCheck off, check.ts's settings fail on the SDK's own file).

import { createProgramRunner, type ToolSpec } from "@codeaction/core";
import { type CodeModeServerOptions, createCodeModeServer, ProgramJobs } from "@codeaction/core/mcp-server";

/** The SDK Server createCodeModeServer returns, unconnected, and how to close what it was given. */
export async function serveCodeMode(tools: ToolSpec[]): Promise<() => Promise<void>> {
  const runner = await createProgramRunner({ tools, execTimeout: 30 });
  const jobs = new ProgramJobs();
  const options: CodeModeServerOptions = { runner, jobs, sandboxDescription: "Python 3.11, no network" };
  const server = createCodeModeServer(options);
  return async () => {
    await server.close();
    await jobs.close();
    await runner.close();
  };
}
