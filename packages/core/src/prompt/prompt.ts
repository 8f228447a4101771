import type { AttemptStatus } from "../types.ts";

/**
 * The prompt a code-action model sees: the rules, the sandbox, the tool stubs, the instructions,
 * the earlier conversation and the question. Also the repair and escalation messages.
 */

export type ConversationTurn = { role: "user" | "assistant"; content: string };

export type CodeActionPromptOptions = {
  /** The user's system text (buildAgent `instructions`). */
  instructions?: string;
  /** Earlier turns of the conversation, oldest first, without the question. */
  conversation: ConversationTurn[];
  question: string;
  /** The stubs as the model sees them (renderStubSignatures). Empty when there are no tools. */
  stubSignatures: string;
  /** Replaces the stubs in the prompt: the index and the search step of discovery (tool-index.ts). */
  functionsSection?: string;
  /** What the sandbox has, in a sentence. */
  sandboxDescription: string;
  /** What the program may reach (describeNetwork); default: no network at all. */
  networkRule?: string;
  /** With `responseFormat`: the JSON Schema the RESULT must match, as text. */
  resultSchema?: string;
  /** With steps or threads: how programs share one interpreter (steps/steps-prompt.ts). */
  stepsSection?: string;
  /** With a thread: what its interpreter holds already, before the question. */
  interpreterNote?: string;
};

/** The prompt's network rule for a sandbox's `network` setting: none, everything, or the listed hosts. */
export function describeNetwork(setting: "none" | "full" | "restricted" | { allow: string[] }): string {
  if (setting === "none") return "Do not use the network: the sandbox has none.";
  if (setting === "full") return "The program may use the network (HTTP, HTTPS and other protocols).";
  const hosts = setting === "restricted" ? ["pypi.org", "files.pythonhosted.org"] : setting.allow;
  return [
    `The program may reach only these hosts, over HTTP or HTTPS on ports 80 and 443: ${hosts.join(", ")}`,
    "(a leading *. covers every name below). Requests go through the proxy set in HTTPS_PROXY and HTTP_PROXY,",
    "which urllib, requests and pip use; any other host is refused.",
  ].join(" ");
}

/** How the prompt describes the default sandbox to the model: Python 3.11, standard library only, no network. */
export const defaultSandboxDescription =
  "Python 3.11 with the standard library only (no pandas, no numpy, no pip installs), and no network";

/** The system message (rules, sandbox, tool stubs, instructions) and the user message of a turn. */
export function buildCodeActionPrompt(options: CodeActionPromptOptions): { system: string; user: string } {
  const system = [
    "You answer the user's question by writing ONE complete Python program. The program runs once,",
    "non-interactively, in a sandbox, and its output is the answer. You do not answer in prose.",
    "",
    "Rules:",
    "1. Reply with exactly one Python program in a single ```python fenced block (a reply with no block or",
    "   with several is not run).",
    "2. Get data only by calling the functions listed below. Do not make up data or hard-code numbers you were not given.",
    '3. The LAST line the program prints must be `RESULT: <answer>`, for example `print(f"RESULT: {total}")`.',
    ...(options.resultSchema
      ? [
          "   The answer must be JSON matching the JSON Schema below: print it after `RESULT: ` with json.dumps",
          '   (`print("RESULT: " + json.dumps(answer))`), on one line. An answer of another shape is sent back to you.',
        ]
      : ["   For structured answers print JSON after `RESULT: ` with json.dumps."]),
    "   Print it once, at the end: if several lines start with `RESULT:`, the last one is the answer and the",
    "   others are ignored.",
    `4. Do not call input(). ${options.networkRule ?? describeNetwork("none")}`,
    "5. Use decimal.Decimal for money and other exact decimal arithmetic, and round only at the end.",
    "6. A function may raise ToolError (the tool failed) or ToolDenied (the call was not approved);",
    "   let them propagate unless the question says how to handle them.",
    ...(options.stepsSection ? ["", options.stepsSection] : []),
    "",
    `The sandbox: ${options.sandboxDescription}. /workspace is writable scratch space; everything else is read-only.`,
    "Files the user should get (charts, tables, reports) go in /workspace/out/ (create it); they come back with the answer.",
    "",
    ...(options.resultSchema
      ? ["The JSON Schema of the answer:", "```json", options.resultSchema, "```", ""]
      : []),
    "Functions:",
    options.functionsSection ?? toolsSection(options.stubSignatures),
    ...(options.instructions?.trim()
      ? ["", "Instructions from the user of this agent:", options.instructions.trim()]
      : []),
  ].join("\n");
  return { system, user: userMessage(options) };
}

/** The prompt's list of tool functions, or the note that there are none. */
function toolsSection(stubSignatures: string): string {
  if (!stubSignatures.trim()) {
    return "No tool functions are available for this task: compute the answer from the question alone.";
  }
  return [
    "These functions are already imported in your program (`from codeaction_tools import *` is done for you).",
    "Call them with keyword arguments. They return Python values (lists, dicts, numbers, strings), not JSON text.",
    "They run outside the sandbox, on the user's side; they are the only source of data.",
    "",
    "```python",
    stubSignatures.trim(),
    "```",
  ].join("\n");
}

/** The user message: the conversation so far, then the question. */
function userMessage(options: CodeActionPromptOptions): string {
  const history = options.conversation
    .filter((turn) => turn.content.trim())
    .map((turn) => `${turn.role === "user" ? "User" : "Assistant"}: ${turn.content.trim()}`);
  return [
    ...(history.length > 0 ? ["The conversation so far:", ...history, ""] : []),
    ...(options.interpreterNote ? [options.interpreterNote, ""] : []),
    "Question:",
    options.question.trim(),
    "",
    "Write the program.",
  ].join("\n");
}

export type RepairReportOptions = {
  program: string;
  status: AttemptStatus;
  exitCode: number | null;
  stdout: string;
  stderr: string;
  execTimeout: number;
  maxToolCalls: number;
  /** The last tool call's error, when a tool failed. */
  toolError?: string;
  /** With status "invalid-result": how the RESULT differs from the required shape. */
  invalidResult?: string;
  /** How many characters of each stream's tail to show. */
  tailCharacters?: number;
};

/** Why an attempt failed, in one sentence. */
export function describeFailure(
  options: Pick<
    RepairReportOptions,
    "status" | "exitCode" | "execTimeout" | "maxToolCalls" | "invalidResult"
  >,
): string {
  switch (options.status) {
    case "timeout":
      return `The program was killed because it ran longer than the time limit of ${options.execTimeout} s.`;
    case "oom":
      return "The program was killed because it ran out of memory.";
    case "no-result":
      return `The program exited with code ${options.exitCode ?? "unknown"} but printed no line starting with \`RESULT:\`.`;
    case "tool-limit":
      return `The program made more tool calls than the limit of ${options.maxToolCalls} per run; the calls past it raised ToolCallLimitExceeded.`;
    case "no-program":
      return "The reply held no single program to run (no python block, or several).";
    case "invalid-result":
      return `The program's RESULT was refused: ${options.invalidResult ?? "it does not match the required shape"}. Print the answer with json.dumps, shaped as the JSON Schema says.`;
    case "infrastructure":
      return "The sandbox failed to run the program.";
    case "aborted":
      return "The program was stopped because the run was cancelled.";
    case "ok":
      return "The program succeeded.";
    default:
      return `The program failed with exit code ${options.exitCode ?? "unknown"}.`;
  }
}

export function tail(text: string, characters: number): string {
  if (text.length <= characters) return text;
  return `[... ${text.length - characters} characters cut ...]${text.slice(-characters)}`;
}

/** The message that asks for a corrected program: the program, the reason and the output tails. */
export function buildRepairMessage(options: RepairReportOptions): string {
  const characters = options.tailCharacters ?? 3000;
  return [
    "Your program failed.",
    "",
    "The program:",
    "```python",
    options.program,
    "```",
    "",
    `Reason: ${describeFailure(options)}`,
    ...(options.toolError ? [`Last tool error: ${options.toolError}`] : []),
    "",
    "stderr (end):",
    "```",
    tail(options.stderr, characters).trimEnd() || "(empty)",
    "```",
    "",
    "stdout (end):",
    "```",
    tail(options.stdout, characters).trimEnd() || "(empty)",
    "```",
    "",
    "Write a corrected, complete program in one ```python block. Its last printed line must be `RESULT: <answer>`.",
  ].join("\n");
}

/** The message that asks for a program when a reply held none to run (no container was started). */
export function buildReplyRepairMessage(reason: string): string {
  return [
    reason,
    "",
    "Write the complete program in one ```python block. Its last printed line must be `RESULT: <answer>`.",
  ].join("\n");
}

export type EscalationCandidate = { program: string; answer?: string; failure?: string };

/** The message for the escalation model: the question and the programs that disagreed or failed. */
export function buildEscalationMessage(options: {
  question: string;
  candidates: EscalationCandidate[];
}): string {
  const parts = options.candidates.map((candidate, index) =>
    [
      `Program ${index + 1}:`,
      "```python",
      candidate.program,
      "```",
      candidate.answer === undefined
        ? `It failed: ${candidate.failure ?? "unknown reason"}`
        : `It answered: ${candidate.answer}`,
    ].join("\n"),
  );
  return [
    "Independent programs written for this question did not produce one agreed answer.",
    "Find the mistake and write one correct program.",
    "",
    "Question:",
    options.question.trim(),
    "",
    ...parts.flatMap((part) => [part, ""]),
    "Write the correct, complete program in one ```python block. Its last printed line must be `RESULT: <answer>`.",
  ].join("\n");
}
