import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { ProgramRunner, ProgramRunResult } from "../program/program-runner.ts";
import { defaultSandboxDescription } from "../prompt/prompt.ts";
import { buildStubs } from "../prompt/python-stubs.ts";
import { clientToolCall } from "./client-tool-call.ts";
import { isLargeCatalogue, listFunctions, listFunctionsTool } from "./list-functions.ts";
import {
  callProgramResult,
  callStartProgram,
  programJobTools,
  startProgramJob,
} from "./program-job-calls.ts";
import type { ProgramJobs } from "./program-jobs.ts";
import { createdTask, programTaskStore } from "./program-tasks.ts";
import { boundedResult, boundedTail } from "./reply-bounds.ts";
import type { ConnectionAdmission } from "./run-admission.ts";
import { callRunProgram, dockerFix, maxProgramCharacters } from "./run-program-call.ts";
import { clientThreadName, threadNamePattern } from "./run-threads.ts";

/** Functions named in run_program's description; the rest are counted (list_functions has them all). */
const namedFunctions = 40;

const serverInfo = { name: "codeaction", version: "0.1.0" };

const toolCallSchema = {
  type: "object",
  properties: {
    tool: { type: "string" },
    args: {},
    status: { type: "string", enum: ["ok", "error", "denied", "limit", "unknown-tool", "invalid"] },
    durationMs: { type: "number" },
    result: {},
    resultPreview: { type: "string" },
    resultCharacters: { type: "integer" },
    error: { type: "string" },
  },
  required: ["tool", "status", "durationMs"],
} as const;

const runOutputSchema = {
  type: "object",
  properties: {
    status: {
      type: "string",
      enum: ["ok", "error", "timeout", "oom", "no-result", "tool-limit", "infrastructure"],
      description: "ok: exited 0 with a RESULT line",
    },
    result: { type: ["string", "null"], description: "the text after the last `RESULT:` line" },
    exitCode: { type: ["integer", "null"] },
    stdout: { type: "string" },
    stderr: { type: "string" },
    truncated: {
      type: "boolean",
      description:
        "output went over 1 MiB per stream, or over this reply's bounds (64 Ki characters of each stream's end, 128 Ki of the RESULT), and was cut",
    },
    toolCalls: { type: "array", items: toolCallSchema },
    runMs: { type: "number" },
    thread: {
      type: "object",
      properties: { id: { type: "string" }, fresh: { type: "boolean" } },
      required: ["id", "fresh"],
      description:
        "with `thread`: the thread, and fresh: true when its interpreter was started for this run (earlier variables are gone)",
    },
  },
  required: ["status", "result", "exitCode", "stdout", "stderr", "truncated", "toolCalls", "runMs"],
} as const;

/** The two tools a client sees, described from the runner's tools and limits. */
export function codeModeTools(runner: ProgramRunner, sandboxDescription: string): Tool[] {
  const names = buildStubs([...runner.tools]).map((stub) => stub.functionName);
  const shown = names.slice(0, namedFunctions).join(", ");
  const more = names.length > namedFunctions ? ` and ${names.length - namedFunctions} more` : "";
  return [
    listFunctionsTool(),
    {
      name: "run_program",
      description: [
        `Runs one Python program in a fresh sandbox: ${sandboxDescription}; at most ${runner.execTimeout} s and ${runner.maxToolCalls} tool calls.`,
        isLargeCatalogue(runner)
          ? `The program calls any of ${names.length} functions, already imported (keyword arguments): find the ones you need with list_functions({query}) first, which returns their signatures.`
          : `The program calls these functions, already imported (keyword arguments; see list_functions for their signatures): ${shown || "none"}${more}.`,
        "A failed call raises ToolError, a refused one ToolDenied. End the program with one line `RESULT: <answer>` (print JSON for structured answers): that text is what this tool returns, with the program's stdout, stderr and every tool call it made.",
      ].join("\n"),
      inputSchema: {
        type: "object",
        properties: {
          program: { type: "string", description: "the Python source", maxLength: maxProgramCharacters },
          thread: {
            type: "string",
            pattern: threadNamePattern.source,
            description:
              "optional: run in this thread's live interpreter, kept between calls: variables, imports and loaded data from earlier programs on the same thread are there. \"new\" makes a thread with an unguessable id (the result's thread.id: pass it next time); use it for state no other client of this server may reach, since a name you choose can be used by anyone holding the server's token. The result's thread.fresh says when it started afresh (first use, or stopped after being idle or least recently used).",
          },
        },
        required: ["program"],
      },
      outputSchema: runOutputSchema as unknown as Tool["outputSchema"],
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
  ];
}

/** What {@link createCodeModeServer} serves, and how. */
export type CodeModeServerOptions = {
  /** The runner whose tools and limits the server offers (`createProgramRunner`). */
  runner: ProgramRunner;
  /** The sandbox as run_program's description names it (default: the stock image's description). */
  sandboxDescription?: string;
  /** Called with each finished run_program run (for a log line). */
  onRun?: (run: ProgramRunResult) => void;
  /** This connection's place in the server's run queue (`createRunAdmission().forConnection(key)`). */
  admit?: ConnectionAdmission;
  /**
   * Ping the client before a run's result so it has handled the run's notifications first: only
   * where the answer comes back on the same connection (stdio, in-memory), not stateless HTTP.
   */
  confirmDelivery?: boolean;
  /** The longest a result waits for that ping (default 2 s). */
  deliveryTimeoutMs?: number;
  /** The server's started programs: with them, start_program, program_result and tasks are offered too. */
  jobs?: ProgramJobs;
};

/**
 * A low-level MCP server (the official SDK's `Server`) offering code mode over `runner`:
 * list_functions and run_program (with `thread`, progress and live output), and with `jobs`
 * start_program, program_result and run_program as a task. Connect it to any transport. One per
 * stdio connection, or one per HTTP request (stateless): the runner, its containers, the wrapped
 * servers and the jobs are shared; closing the server closes none of them.
 */
export function createCodeModeServer(input: CodeModeServerOptions): Server {
  const options = { ...input, sandboxDescription: input.sandboxDescription ?? defaultSandboxDescription };
  const { jobs } = options;
  // With the server's jobs, run_program may also be called as a task (the specification's tasks).
  const server = jobs
    ? new Server(serverInfo, {
        capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } },
        taskStore: programTaskStore(jobs, runProgramReply),
      })
    : new Server(serverInfo, { capabilities: { tools: {} } });
  const tools = [
    ...codeModeTools(options.runner, options.sandboxDescription).map((tool) =>
      jobs && tool.name === "run_program"
        ? { ...tool, execution: { taskSupport: "optional" as const } }
        : tool,
    ),
    ...(jobs ? programJobTools() : []),
  ];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    if (name === "list_functions") return listFunctions(options.runner, args);
    if (jobs && name === "run_program" && request.params.task) {
      const runId = startProgramJob({ ...options, jobs }, args, "run_program");
      return typeof runId === "string" ? createdTask(jobs, runId) : runId;
    }
    if (name === "run_program") return callRunProgram({ ...options, toResult: runProgramReply }, args, extra);
    if (jobs && name === "start_program") return callStartProgram({ ...options, jobs }, args);
    if (jobs && name === "program_result") {
      return callProgramResult({ jobs, toResult: runProgramReply }, args, extra.signal);
    }
    return errorResult(
      `Unknown tool ${JSON.stringify(name)}: this server has ${tools.map((tool) => tool.name).join(", ")}.`,
    );
  });
  return server;
}

/** The RESULT as text (or what went wrong), and everything as structured content. */
export function runProgramReply(run: ProgramRunResult): CallToolResult {
  // Bounded, so a reply a client never reads stays small (run-admission.ts caps how many there are).
  const result = run.result === undefined ? undefined : boundedResult(run.result);
  const stdout = boundedTail(run.stdout);
  const stderr = boundedTail(run.stderr);
  const structured = {
    status: run.status,
    result: result?.text ?? null,
    exitCode: run.exitCode,
    stdout: stdout.text,
    stderr: stderr.text,
    truncated: run.truncated || stdout.cut || stderr.cut || (result?.cut ?? false),
    toolCalls: run.toolCalls.map(clientToolCall),
    runMs: Math.round(run.runMs),
    ...(run.thread ? { thread: { id: clientThreadName(run.thread.id), fresh: run.thread.fresh } } : {}),
  };
  if (run.status === "ok") {
    return { content: [{ type: "text", text: result?.text ?? "" }], structuredContent: structured };
  }
  return {
    content: [{ type: "text", text: describeFailure(run) }],
    structuredContent: structured,
    isError: true,
  };
}

const failureText: Record<ProgramRunResult["status"], string> = {
  ok: "",
  error: "The program failed",
  timeout: "The program ran out of time and was killed",
  oom: "The program went over its memory limit and was killed",
  "no-result": "The program ended without printing a `RESULT: <answer>` line",
  "tool-limit": "The program went over its tool-call limit",
  infrastructure: "The sandbox failed",
  aborted: "The run was cancelled and the program killed",
};

function describeFailure(run: ProgramRunResult): string {
  const lines = [`${failureText[run.status]} (exit ${run.exitCode ?? "none"}).`];
  if (run.infrastructureError) lines.push(run.infrastructureError);
  if (run.status === "infrastructure") lines.push(`The Docker engine failed under the run. ${dockerFix}`);
  const stderr = run.stderr.trimEnd();
  if (stderr) lines.push(`stderr (the end):\n${stderr.slice(-2000)}`);
  const stdout = run.stdout.trimEnd();
  if (stdout) lines.push(`stdout (the end):\n${stdout.slice(-2000)}`);
  return lines.join("\n");
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
