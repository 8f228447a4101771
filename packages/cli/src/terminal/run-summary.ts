import type { AgentEvent, RunUsage } from "@codeaction/core";
import { escapeForTerminal } from "./escape-for-terminal.ts";

/** A line the program wrote, as `ask --verbose` and `chat` show it live: "│ line" (stderr lines marked). */
export function programOutputLine(event: Extract<AgentEvent, { type: "program-output" }>): string {
  const line = escapeForTerminal(event.line, { keepNewlines: false });
  if (event.cut) return `│ ${line}`;
  return event.stream === "stderr" ? `│ stderr: ${line}` : `│ ${line}`;
}

/** The one-line usage summary `ask --verbose` prints: tokens, calls, attempts, sandbox time, cost. */
export function usageSummary(usage: RunUsage): string {
  const tokens =
    usage.totalTokens === undefined
      ? "tokens not reported"
      : `${usage.totalTokens} tokens (${usage.inputTokens ?? "?"} in, ${usage.outputTokens ?? "?"} out)`;
  const cost = usage.costUsd === undefined ? "" : `, $${usage.costUsd.toFixed(4)}`;
  return `usage: ${tokens}, ${usage.modelCalls} model call(s), ${usage.toolCalls} tool call(s), ${usage.attempts} attempt(s), ${usage.sandboxSeconds.toFixed(1)} s in the sandbox${cost}`;
}
