// @codeaction/core/mcp-server: code mode served over MCP from a server of your own. One call gives
// the official SDK's `Server` offering list_functions and run_program (threads, progress, live
// output), and with a ProgramJobs start_program, program_result and tasks, over a ProgramRunner;
// connect it to any transport (stdio, Streamable HTTP, in-memory). The codeaction command's `mcp`
// is a shell over it: its HTTP listener, tokens and --allow/--deny stay in the command.

export {
  type CodeModeServerOptions,
  createCodeModeServer,
  runProgramReply,
} from "./code-mode-server.ts";
export { type JobState, ProgramJobs } from "./program-jobs.ts";
export {
  type AdmissionTicket,
  type ConnectionAdmission,
  createRunAdmission,
  maxServerRuns,
  runsPerConnection,
} from "./run-admission.ts";
