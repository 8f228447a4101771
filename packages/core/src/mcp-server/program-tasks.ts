import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import type { CallToolResult, CreateTaskResult, Task } from "@modelcontextprotocol/sdk/types.js";
import type { ProgramRunResult } from "../program/program-runner.ts";
import { keepResultMs, type ProgramJobs } from "./program-jobs.ts";

/** How often a client is told to ask for a task's status. */
const pollIntervalMs = 2000;

/**
 * The specification's tasks over the server's started programs (program-jobs.ts): a client that
 * declares tasks calls run_program with `task`, gets a task at once, asks `tasks/get` for its status
 * and `tasks/result` for the reply run_program would have given. A task is a job: the same bounds
 * (run caps held until the program ends, the latest results kept 10 minutes) and the same 128-bit
 * ids, known only to the client that started it. `tasks/list` is not offered: over stateless HTTP
 * every client shares one (absent) session, and a list would show one client another's tasks.
 */
export function programTaskStore(
  jobs: ProgramJobs,
  toResult: (run: ProgramRunResult) => CallToolResult,
): TaskStore {
  const unused = (what: string) => () => Promise.reject(new Error(`${what} is not used by this server`));
  return {
    createTask: unused("createTask"),
    storeTaskResult: unused("storeTaskResult"),
    getTask: async (taskId) => taskOf(jobs, taskId) ?? null,
    getTaskResult: async (taskId) => {
      const found = jobs.peek(taskId);
      if (!found) throw new Error(`no task ${taskId.slice(0, 80)} here`);
      const { state } = found;
      if (state.state === "done") return toResult(state.run);
      if (state.state === "failed") {
        return {
          content: [{ type: "text", text: `The sandbox could not run the program: ${state.error.message}` }],
          isError: true,
        };
      }
      throw new Error(`task ${taskId.slice(0, 80)} has not ended`);
    },
    updateTaskStatus: async (taskId, status) => {
      if (status === "cancelled") jobs.cancel(taskId, "the client cancelled the task");
    },
    listTasks: async () => ({ tasks: [] }),
  };
}

/** The task a job is, as the specification describes it. */
export function taskOf(jobs: ProgramJobs, taskId: string): Task | undefined {
  const found = jobs.peek(taskId);
  if (!found) return undefined;
  const { state } = found;
  const status: Task["status"] =
    state.state === "running"
      ? "working"
      : state.state === "done" && state.run.status !== "aborted"
        ? "completed"
        : state.state === "done"
          ? "cancelled"
          : "failed";
  return {
    taskId,
    status,
    ttl: keepResultMs,
    createdAt: new Date(found.startedAt).toISOString(),
    lastUpdatedAt: new Date(found.endedAt ?? found.startedAt).toISOString(),
    pollInterval: pollIntervalMs,
  };
}

/** The reply to a task-augmented run_program: the task of the job just started. */
export function createdTask(jobs: ProgramJobs, runId: string): CreateTaskResult {
  const task = taskOf(jobs, runId);
  if (!task) throw new Error(`the job ${runId} was forgotten as it started`);
  return { task };
}
