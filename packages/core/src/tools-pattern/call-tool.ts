import { SandboxUnavailableError } from "../errors/sandbox-unavailable-error.ts";
import { ToolInputError } from "../errors/tool-input-error.ts";
import { askApproval, denialOf } from "../tools/approval.ts";
import { invalidArguments, roundedMilliseconds, type ToolSpec } from "../tools/tool-spec.ts";
import { encodeToolValue } from "../tools/tool-value.ts";
import { describeUnknownKeys, findUnknownKeys } from "../tools/unknown-keys.ts";
import type { ApprovalHook, ApprovalRequest, ToolCallRecord } from "../types.ts";

/** What one tool call gives back: the record, and the text the model reads. */
export type ToolCallOutcome = { record: ToolCallRecord; content: string };

/** One call the model asked for, with what it needs to run. */
export type ToolCall = {
  id: string;
  /** The tool, or undefined when the model named one that does not exist. */
  tool: ToolSpec | undefined;
  /** The name the model used. */
  name: string;
  args: unknown;
  runId: string;
  approval?: ApprovalHook;
  availableTools: string[];
  /** The turn's signal: the approval hook and the tool receive it. */
  signal?: AbortSignal;
};

/** Ends a call: its status, the model's text and the record's result or error. */
type FinishCall = (
  status: ToolCallRecord["status"],
  content: string,
  extra: { result?: unknown; error?: string },
) => ToolCallOutcome;

/**
 * Runs one call the model asked for. An unknown tool, a denial, bad input and a failing tool all
 * become text for the model, so the loop can go on. Only a cancelled turn (its signal) ends an
 * approval wait with the signal's reason, and a shell-mode sandbox that could not start
 * (SandboxUnavailableError) fails the turn: nothing the model does can repair it.
 */
export async function callTool(call: ToolCall): Promise<ToolCallOutcome> {
  const { tool, args } = call;
  const toolName = tool?.name ?? call.name;
  const finish = callFinisher(call, toolName);
  if (tool === undefined) {
    const error = `Unknown tool '${call.name}'. Available tools: ${call.availableTools.join(", ") || "none"}.`;
    return finish("unknown-tool", `Error: ${error}`, { error });
  }
  if (!isPlainObject(args)) {
    const error = `Invalid input for tool '${toolName}': the arguments must be a JSON object.`;
    return finish("invalid", `Error: ${error}`, { error });
  }

  const unknownKeys = findUnknownKeys(tool.inputSchema, args);
  if (unknownKeys.length > 0) {
    const error = new ToolInputError({ tool: toolName, issues: describeUnknownKeys(unknownKeys) }).message;
    return finish("invalid", `Error: ${error}`, { error });
  }

  if (call.approval) {
    // Checked before anyone is asked: an approval is never sought for a call that could not run.
    const invalid = await invalidArguments(tool, args);
    if (invalid !== undefined) return finish("invalid", `Error: ${invalid}`, { error: invalid });
    const denial = await approvalOf(call.approval, {
      tool: toolName,
      args,
      runId: call.runId,
      ...(call.signal ? { signal: call.signal } : {}),
    });
    if (denial !== undefined) {
      const error = `Tool call denied: ${denial}`;
      return finish("denied", error, { error });
    }
  }
  return invokeTool(tool, { ...call, args }, finish);
}

/** The call's `finish`: its record, timed from now. */
function callFinisher(call: ToolCall, toolName: string): FinishCall {
  const started = performance.now();
  return (status, content, extra) => ({
    record: {
      id: call.id,
      tool: toolName,
      args: call.args,
      status,
      durationMs: roundedMilliseconds(performance.now() - started),
      ...extra,
    },
    content,
  });
}

/** Calls the tool; what it returns or throws becomes the outcome. */
async function invokeTool(
  tool: ToolSpec,
  call: ToolCall & { args: Record<string, unknown> },
  finish: FinishCall,
): Promise<ToolCallOutcome> {
  try {
    const result = await tool.invoke(call.args, {
      runId: call.runId,
      callId: call.id,
      ...(call.signal ? { signal: call.signal } : {}),
    });
    // Strings are the text as they are; every other value is mapped as for a program (tool-value.ts).
    if (typeof result === "string") return finish("ok", result, { result });
    const encoded = encodeToolValue(result, tool.name);
    return finish("ok", encoded.text, { result: encoded.record });
  } catch (thrown) {
    // Shell mode's container could not start: nothing the model can repair, so the turn fails.
    if (SandboxUnavailableError.isInstance(thrown)) throw thrown;
    const error = thrown instanceof Error ? thrown.message : String(thrown);
    // A tool that stops because the turn was cancelled did not fail: the record says so.
    if (call.signal?.aborted) return finish("cancelled", `Error: ${error}`, { error });
    return finish(isInvalidInput(thrown) ? "invalid" : "error", `Error: ${error}`, { error });
  }
}

/**
 * Returns the reason of a denial, or undefined when the call may run (tools/approval.ts). A cancelled
 * turn stops waiting for the person: the turn ends with the cancellation, nothing is denied.
 */
async function approvalOf(approval: ApprovalHook, request: ApprovalRequest): Promise<string | undefined> {
  const decision = await askApproval(
    (asked) => untilAborted(Promise.resolve(approval(asked)), asked.signal),
    request,
  );
  request.signal?.throwIfAborted();
  return denialOf(request.tool, decision);
}

/** A schema failure (zod, or a tool's own input check) rather than a failure of the tool. */
function isInvalidInput(thrown: unknown): boolean {
  return ToolInputError.isInstance(thrown) || (thrown instanceof Error && thrown.name === "ZodError");
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => {
    if (onAbort) signal.removeEventListener("abort", onAbort);
  });
}
