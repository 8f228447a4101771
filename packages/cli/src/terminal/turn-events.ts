// A turn's events on the terminal: the progress line and, with --show-program, the trace on stderr.
import type { Agent, AgentEvent, AgentResult } from "@codeaction/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CliContext } from "../context.ts";
import { describeAttemptFailure } from "./describe-attempt-failure.ts";
import { escapeForTerminal } from "./escape-for-terminal.ts";
import { describeCopy, type Progress } from "./progress.ts";
import { programOutputLine } from "./run-summary.ts";

/** Streams one turn, turning its events into progress and (with --show-program) a trace on stderr. */
export async function runTurn(
  agent: Agent,
  question: string,
  options: {
    progress: Progress;
    context: CliContext;
    showProgram: boolean;
    verbose: boolean;
    /** The options of the agent's call (AgentSession.callOptions: the signal, later the thread). */
    callOptions: Partial<RunnableConfig>;
    onEvent?: (event: AgentEvent) => void;
    image: string;
  },
): Promise<AgentResult> {
  options.progress.update("waiting for the model");
  // Each attempt's stderr, for the line that says why it failed.
  const stderrTails = new Map<string, string>();
  const events = await agent.stream({ messages: [{ role: "user", content: question }] }, options.callOptions);
  // The answer is the stream's last event: the loop runs to the stream's end, so the turn ends as
  // answered (its chain run and spans closed as such), not as a stream left early.
  let answer: AgentResult | undefined;
  try {
    for await (const event of events) {
      if (event.type === "answer") answer = event.result;
      else {
        options.onEvent?.(event);
        reportEvent(event, { ...options, pattern: agent.pattern, stderrTails });
      }
    }
  } catch (error) {
    // What fails after the answer (a callback handler closing its run) does not take the answer.
    if (!answer) throw error;
  }
  if (!answer) throw new Error("the agent's stream ended without an answer");
  return answer;
}

/** One event of a turn on the progress line; with --show-program, the program and its calls too. */
function reportEvent(
  event: AgentEvent,
  options: {
    progress: Progress;
    showProgram: boolean;
    verbose: boolean;
    pattern: Agent["pattern"];
    image: string;
    stderrTails: Map<string, string>;
  },
): void {
  const { progress, showProgram } = options;
  const show = (text: string) => progress.note(text);
  switch (event.type) {
    case "model-start":
      progress.update(
        event.attempt === undefined || event.attempt === 1
          ? "waiting for the model"
          : `waiting for the model (attempt ${event.attempt})`,
      );
      break;
    case "program-output":
      if (options.verbose) show(programOutputLine(event));
      break;
    case "program-start":
      showProgramStart(event, { progress, showProgram });
      break;
    case "tool-call":
      // Code-action tool events name their attempt; in the tools pattern the model itself calls.
      progress.update(
        `the ${event.attempt === undefined ? "model" : "program"} called ${escapeForTerminal(event.tool, { keepNewlines: false })}`,
      );
      break;
    case "tool-result":
      if (showProgram) {
        show(
          `tool call ${escapeForTerminal(event.tool, { keepNewlines: false })}: ${event.status}, ${summarize(event)} (${Math.round(event.durationMs)} ms)`,
        );
      }
      progress.update(
        options.pattern === "code-action" ? "running the program in the sandbox" : "waiting for the model",
      );
      break;
    case "program-end":
      options.stderrTails.set(`${event.sample ?? 0}:${event.attempt}`, event.stderrTail);
      if (showProgram) showProgramEnd(event, show);
      break;
    case "data-file-copy":
      // Shown on a terminal only.
      progress.count(describeCopy(event));
      if (event.bytesCopied === event.totalBytes)
        progress.update(`running the program (attempt ${event.attempt}) in the sandbox`);
      break;
    case "repair-start":
      showRepairStart(event, options);
      break;
    default:
      break;
  }
}

/** A program about to run: on the progress line, and whole with --show-program. */
function showProgramStart(
  event: Extract<AgentEvent, { type: "program-start" }>,
  options: { progress: Progress; showProgram: boolean },
): void {
  if (options.showProgram) {
    options.progress.note(`── attempt ${event.attempt}: the program ${"─".repeat(40)}`);
    options.progress.note(escapeForTerminal(event.program.trimEnd()));
    options.progress.note("─".repeat(60));
  }
  options.progress.update(`running the program (attempt ${event.attempt}) in the sandbox`);
}

/** Why the attempt before a repair failed, with a fix where one is known. */
function showRepairStart(
  event: Extract<AgentEvent, { type: "repair-start" }>,
  options: { progress: Progress; image: string; stderrTails: Map<string, string> },
): void {
  for (const line of describeAttemptFailure({
    attempt: event.attempt - 1,
    reason: event.reason,
    stderrTail: options.stderrTails.get(`${event.sample ?? 0}:${event.attempt - 1}`),
    image: options.image,
  }))
    options.progress.note(line);
  options.progress.update("waiting for the model");
}

/** How an attempt's program ended, with the tails of its output. */
function showProgramEnd(
  event: Extract<AgentEvent, { type: "program-end" }>,
  show: (text: string) => void,
): void {
  show(`attempt ${event.attempt}: ${event.status}, exit ${event.exitCode ?? "none"}`);
  if (event.stdoutTail.trim()) show(`stdout:\n${indent(escapeForTerminal(event.stdoutTail.trimEnd()))}`);
  if (event.stderrTail.trim()) show(`stderr:\n${indent(escapeForTerminal(event.stderrTail.trimEnd()))}`);
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}

/**
 * A short description of a tool result: "500 items", "a dict with 3 keys", or its start. A big
 * result is kept by the bridge as a preview with its length, which still says how many.
 */
function summarize(event: {
  result?: unknown;
  resultPreview?: string;
  resultLength?: number;
  error?: string;
}): string {
  const { result, resultPreview, resultLength } = event;
  if (result === undefined && resultPreview !== undefined && resultLength !== undefined) {
    return resultPreview.startsWith("[") ? items(resultLength) : `a dict with ${resultLength} keys`;
  }
  const value = result ?? (resultPreview === undefined ? event.error : `${resultPreview}...`);
  if (Array.isArray(value)) return items(value.length);
  if (value && typeof value === "object") return `a dict with ${Object.keys(value).length} keys`;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const line = escapeForTerminal(text ?? "nothing", { keepNewlines: false });
  return line.length > 100 ? `${line.slice(0, 100)}...` : line;
}

function items(count: number): string {
  return `${count} item${count === 1 ? "" : "s"}`;
}
