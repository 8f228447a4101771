import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ProgramRunner, ProgramRunResult } from "../program/program-runner.ts";
import { keepResultMs, maxKeptResults, maxWaitSeconds, type ProgramJobs } from "./program-jobs.ts";
import type { ConnectionAdmission } from "./run-admission.ts";
import { checkedProgram, dockerFix } from "./run-program-call.ts";

/** The default wait of one program_result call. */
const defaultWaitSeconds = 30;

/** start_program and program_result: a long program for a client whose requests time out first. */
export function programJobTools(): Tool[] {
  return [
    {
      name: "start_program",
      description: [
        "Starts one Python program as run_program would (the same sandbox, functions and limits) and returns at once with its run_id; call program_result({run_id}) to get its result.",
        "Use it for a program that may take longer than your requests may wait (run_program answers only when the program ends).",
      ].join("\n"),
      inputSchema: {
        type: "object",
        properties: { program: { type: "string", description: "the Python source" } },
        required: ["program"],
      },
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    {
      name: "program_result",
      description: [
        `The result of a program start_program started: waits up to wait_seconds (default ${defaultWaitSeconds}, at most ${maxWaitSeconds}) for it to end, then returns what run_program would have, or "running" with the output so far; then call again.`,
        `A result is kept ${keepResultMs / 60_000} minutes after the program ends (the latest ${maxKeptResults} results).`,
      ].join("\n"),
      inputSchema: {
        type: "object",
        properties: {
          run_id: { type: "string", description: "what start_program returned" },
          wait_seconds: { type: "number", minimum: 0, maximum: maxWaitSeconds },
        },
        required: ["run_id"],
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
  ];
}

type JobOptions = {
  runner: ProgramRunner;
  jobs: ProgramJobs;
  admit?: ConnectionAdmission;
  onRun?: (run: ProgramRunResult) => void;
};

/** start_program: the program checked and admitted, started, its run id returned. */
export function callStartProgram(
  options: JobOptions,
  args: Record<string, unknown> | undefined,
): CallToolResult {
  const runId = startProgramJob(options, args, "start_program");
  if (typeof runId !== "string") return runId;
  return {
    content: [
      {
        type: "text",
        text: `Started: run_id ${runId}. Call program_result({"run_id": "${runId}"}) for its result.`,
      },
    ],
    structuredContent: { runId, state: "running" },
  };
}

/** A program checked, admitted and started as a job (start_program, a run_program task): its run id, or the error result. */
export function startProgramJob(
  options: JobOptions,
  args: Record<string, unknown> | undefined,
  tool: string,
): string | CallToolResult {
  const program = checkedProgram(tool, args);
  if (typeof program !== "string") return program;
  const ticket = options.admit?.();
  if (ticket && "refusal" in ticket) return errorResult(ticket.refusal);
  return options.jobs.start(async (signal, onOutput) => {
    const run = await options.runner.run(program, {
      signal,
      onEvent: (event) => {
        if (event.type === "program-output") onOutput(event.line);
      },
    });
    options.onRun?.(run);
    return run;
  }, ticket);
}

/** program_result: the run's result, or that it still runs (with its latest output), or that it is unknown. */
export async function callProgramResult(
  options: { jobs: ProgramJobs; toResult: (run: ProgramRunResult) => CallToolResult },
  args: Record<string, unknown> | undefined,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const runId = args?.run_id;
  if (typeof runId !== "string" || runId === "") {
    return errorResult("program_result needs `run_id`: what start_program returned.");
  }
  const wait = args?.wait_seconds;
  if (wait !== undefined && (typeof wait !== "number" || !Number.isFinite(wait) || wait < 0)) {
    return errorResult(`wait_seconds must be a number from 0 to ${maxWaitSeconds}.`);
  }
  const found = await options.jobs.state(runId, wait ?? defaultWaitSeconds, signal);
  switch (found.state) {
    case "unknown":
      return errorResult(
        `No run ${JSON.stringify(runId.slice(0, 80))} here: it was not started on this server, or its result was forgotten (results are kept ${keepResultMs / 60_000} minutes, the latest ${maxKeptResults}). Start it again with start_program.`,
      );
    case "failed":
      return errorResult(
        `The sandbox could not run the program: ${found.error.message}\nThe Docker engine did not answer as it should. ${dockerFix}`,
      );
    case "running": {
      const seconds = Math.round(found.elapsedMs / 1000);
      const output = found.output ? `\nIts latest output:\n${found.output}` : "";
      return {
        content: [
          {
            type: "text",
            text: `Still running after ${seconds} s; call program_result again with the same run_id.${output}`,
          },
        ],
        structuredContent: { runId, state: "running", elapsedMs: found.elapsedMs, output: found.output },
      };
    }
    case "done": {
      const result = options.toResult(found.run);
      return { ...result, structuredContent: { ...result.structuredContent, runId, state: "done" } };
    }
  }
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
