import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  EmptyResultSchema,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import type { ProgramRunner, ProgramRunResult } from "../program/program-runner.ts";
import type { ConnectionAdmission } from "./run-admission.ts";
import { deliveryTimeoutMs, reportRunProgress } from "./run-progress.ts";
import { threadOf } from "./run-threads.ts";

/** A program longer than this is refused before a container starts. */
export const maxProgramCharacters = 1_000_000;

/** What the client is told to do when the engine fails under a run. */
export const dockerFix =
  "Check that Docker is running (docker info) and that DOCKER_HOST, if set, points at it; then call run_program again.";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One run_program call: the program checked, run (with progress notifications, ticks and the
 * program's output lines, when the client sent a progressToken), and what the client gets back. An engine that fails or stops answering
 * is named as Docker, with the fix.
 */
export async function callRunProgram(
  options: {
    runner: ProgramRunner;
    onRun?: (run: ProgramRunResult) => void;
    toResult: (run: ProgramRunResult) => CallToolResult;
    /** A place in the server's run queue (run-admission.ts); without it, no cap. */
    admit?: ConnectionAdmission;
    /**
     * Ping the client after a run's last progress notification and send the result after its
     * answer (run-progress.ts says why). Only where the answer comes back to this server: stdio,
     * not stateless HTTP.
     */
    confirmDelivery?: boolean;
    /** The longest the result waits for that (default 2 s). */
    deliveryTimeoutMs?: number;
  },
  args: Record<string, unknown> | undefined,
  extra: Extra,
): Promise<CallToolResult> {
  const program = checkedProgram("run_program", args);
  if (typeof program !== "string") return program;
  const thread = threadOf(args, extra.sessionId);
  if ("refusal" in thread) return errorResult(thread.refusal);
  const ticket = options.admit?.();
  if (ticket && "refusal" in ticket) return errorResult(ticket.refusal);
  try {
    return await runAdmitted(options, program, extra, thread.key);
  } finally {
    ticket?.release();
  }
}

/** The program a call sent, or the error result saying what is wrong with it. */
export function checkedProgram(
  tool: string,
  args: Record<string, unknown> | undefined,
): string | CallToolResult {
  const program = args?.program;
  if (typeof program !== "string" || program.trim() === "") {
    return errorResult(`${tool} needs \`program\`: the Python source to run, as a string.`);
  }
  if (program.length > maxProgramCharacters) {
    return errorResult(
      `The program is ${program.length} characters; ${tool} takes at most ${maxProgramCharacters}.`,
    );
  }
  return program;
}

async function runAdmitted(
  options: Parameters<typeof callRunProgram>[0],
  program: string,
  extra: Extra,
  thread: string | undefined,
): Promise<CallToolResult> {
  const progressToken = extra._meta?.progressToken;
  const progress =
    progressToken === undefined
      ? undefined
      : reportRunProgress({
          progressToken,
          execTimeout: options.runner.execTimeout,
          send: (notification) => extra.sendNotification(notification),
          ...(options.confirmDelivery ? { confirm: () => ping(extra, options.deliveryTimeoutMs) } : {}),
          ...(options.deliveryTimeoutMs === undefined
            ? {}
            : { deliveryTimeoutMs: options.deliveryTimeoutMs }),
        });
  let run: ProgramRunResult;
  try {
    run = await options.runner.run(program, {
      signal: extra.signal,
      ...(thread ? { thread } : {}),
      // The program's lines go to a client that asked for progress, as they come.
      ...(progress
        ? { onEvent: (event) => (event.type === "program-output" ? progress.output(event) : undefined) }
        : {}),
    });
  } catch (error) {
    return errorResult(
      `The sandbox could not run the program: ${(error as Error).message}\nThe Docker engine did not answer as it should. ${dockerFix}`,
    );
  } finally {
    await progress?.stop();
  }
  options.onRun?.(run);
  return options.toResult(run);
}

/** A ping to the client (none for a cancelled call: it gets no result); its answer comes after everything sent before it was handled. */
async function ping(extra: Extra, timeout = deliveryTimeoutMs): Promise<void> {
  if (extra.signal.aborted) return;
  await extra.sendRequest({ method: "ping" }, EmptyResultSchema, { timeout });
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
