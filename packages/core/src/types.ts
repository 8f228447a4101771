import type { RunUsage } from "./budget/usage.ts";
import type { CallLogEntry } from "./durable/call-log.ts";
import type { PendingCall, RunState } from "./durable/run-state.ts";
import type { OutputFile, RefusedOutputFile } from "./output/output-files.ts";
/** What an approval hook sees for every bridged or tool-loop call. */
export type ApprovalRequest = {
  tool: string;
  args: Record<string, unknown>;
  runId: string;
  /** Aborts when the turn is cancelled or the program ends: stop waiting for a person then. */
  signal?: AbortSignal;
  /**
   * Set on a resumed run's pending call that `agent.resume()` was told to approve: the person has
   * decided, so do not ask again; answer false (or `{ approved: false }`) only where this agent's
   * own policy forbids the call (it then is not made). "interrupt" or true keeps the decision.
   */
  resumeDecision?: "approved";
};
/**
 * What an approval hook answers: true/false, or `{ approved, reason }` (the reason reaches the program
 * or the model). Code-action also takes "interrupt" (or `{ interrupt: true, reason }`): decide later.
 * The call is not made, the program is stopped, and invoke returns `status: "interrupted"` with a
 * state to pass to `agent.resume()` (docs/durable-runs.md). The tools pattern denies it.
 */
export type ApprovalDecision = boolean | { approved: boolean; reason?: string } | ApprovalInterrupt;
/** An approval hook's "decide later" (see ApprovalDecision). */
export type ApprovalInterrupt = "interrupt" | { interrupt: true; reason?: string };
/** Called before every tool call a program or the model makes; the call runs only when it approves. Fails closed when it throws. */
export type ApprovalHook = (call: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>;

/** One bridged or tool-loop call, as recorded in a result. */
export type ToolCallRecord = {
  id: string;
  tool: string;
  /**
   * The arguments, when their JSON is at most 2000 characters; else see argsPreview. Absent for a
   * call the bridge refused (limit, unknown-tool, invalid): those keep only their size and reason.
   */
  args?: unknown;
  /** The first 2000 characters of the arguments' JSON, when they are too big to keep whole. */
  argsPreview?: string;
  /** The size of the request the program wrote, in bytes. */
  requestBytes?: number;
  /** The result, when its JSON is at most 2000 characters; else see resultPreview. */
  result?: unknown;
  /** The first 2000 characters of the result's JSON, when it is too big to keep whole. */
  resultPreview?: string;
  /**
   * The size of the result's JSON in bytes, when only a preview (or nothing) of it is kept. For a
   * result refused over maxResultBytes by its sizes alone (see its error), the bytes measured before
   * the host stopped: at least this many.
   */
  resultBytes?: number;
  /** With resultPreview: how many items the result list had, or keys the result dict had. */
  resultLength?: number;
  /** Why the call failed (at most 2000 characters). */
  error?: string;
  /**
   * "ok" | "error" (the tool threw, or its result had no Python form or was over maxResultBytes) |
   * "denied" | "limit" (over maxToolCalls) | "unknown-tool" | "invalid" (a malformed or oversized
   * request, unknown keys, arguments the schema refused) | "cancelled" (the program ended first, or
   * the turn was cancelled while the tool ran)
   */
  status: "ok" | "error" | "denied" | "limit" | "unknown-tool" | "invalid" | "cancelled";
  /** Milliseconds, to 0.01 ms. */
  durationMs: number;
};

/** How one program ended: ok, error, timeout, oom, no-result (no RESULT line), tool-limit, or infrastructure (the sandbox failed). */
export type AttemptStatus =
  | "ok"
  | "error"
  | "timeout"
  | "oom"
  | "no-result"
  /** The reply held no single program (none, or several python blocks): no container was started. */
  | "no-program"
  /** The program printed a RESULT that does not match `responseFormat` (see `invalidResult`). */
  | "invalid-result"
  | "tool-limit"
  | "infrastructure"
  /** The turn's signal aborted while the program ran. */
  | "aborted";

/** One program and what became of it. */
export type Attempt = {
  attempt: number;
  /** Which independent sample this attempt belongs to (1-based; codeAction.samples). */
  sample?: number;
  /** True for the escalation model's attempts (codeAction.escalate). */
  escalated?: boolean;
  /**
   * With steps (codeAction.maxSteps above 1, or state "thread"): the step this program belongs to
   * (1-based); a step's repairs share its number. Every attempt of a run with steps ran in one interpreter.
   */
  step?: number;
  /** With steps, after a program that left its interpreter alive: what `__main__` holds (bounded). */
  interpreterSummary?: string;
  program: string;
  modelReply: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  status: AttemptStatus;
  /** The text after the last stdout `RESULT:` line, when there is one. */
  result?: string;
  /** With status "invalid-result": how the RESULT differs from `responseFormat`, path by path. */
  invalidResult?: string;
  truncated: boolean;
  toolCalls: ToolCallRecord[];
  /** The program's call log (docs/durable-runs.md): what replayRun answers its calls from. */
  callLog?: CallLogEntry[];
  timings: { modelMs: number; containerStartMs: number; runMs: number; totalMs: number };
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
} & OutputBytes;

/**
 * A program's exact output bytes, base64, present only for a stream that is not valid UTF-8 (its
 * text then holds U+FFFD there): with them a record loses nothing the program wrote.
 */
export type OutputBytes = { stdoutBase64?: string; stderrBase64?: string };

/** Step events, noun-action. The last event of a stream is `answer` and carries the result. */
export type AgentEvent =
  /** A model call begins (code-action: `attempt` and `sample` say which program it writes). No content. */
  | { type: "model-start"; runId: string; attempt?: number; sample?: number; model: string }
  | {
      /** The model call ended: `ok: false` when it failed or the run was stopped. No content. */
      type: "model-end";
      runId: string;
      attempt?: number;
      sample?: number;
      model: string;
      ok: boolean;
      durationMs: number;
      inputTokens?: number;
      outputTokens?: number;
    }
  | {
      type: "program-start";
      runId: string;
      attempt: number;
      sample?: number;
      /** With steps: the step the program belongs to. */
      step?: number;
      program: string;
    }
  | {
      type: "tool-call";
      runId: string;
      /** Code-action: the attempt and sample the calling program belongs to. */
      attempt?: number;
      sample?: number;
      id: string;
      tool: string;
      /** As in ToolCallRecord: whole when small, else argsPreview. */
      args?: unknown;
      argsPreview?: string;
    }
  | {
      type: "tool-result";
      runId: string;
      attempt?: number;
      sample?: number;
      id: string;
      tool: string;
      durationMs: number;
      /** As in ToolCallRecord: whole when small, else resultPreview and resultBytes. */
      result?: unknown;
      resultPreview?: string;
      resultBytes?: number;
      resultLength?: number;
      error?: string;
      status: ToolCallRecord["status"];
    }
  | {
      type: "program-end";
      runId: string;
      attempt: number;
      sample?: number;
      /** With steps: the step the program belongs to. */
      step?: number;
      status: AttemptStatus;
      exitCode: number | null;
      stdoutTail: string;
      stderrTail: string;
    }
  | { type: "repair-start"; runId: string; attempt: number; sample?: number; reason: string }
  | {
      /**
       * A line the program wrote (code-action), sent while it runs. Bounded per run (2000 lines,
       * 256 KiB): past that, one last event with `cut: true` says so, and the rest is not sent live.
       */
      type: "program-output";
      runId: string;
      attempt: number;
      sample?: number;
      stream: "stdout" | "stderr";
      /** The line without its newline (a line longer than 4 KiB comes in pieces). */
      line: string;
      /** True on the one event that says the live output was cut here. */
      cut?: boolean;
    }
  | {
      /** Code-action with dataFiles: a data file is being copied into the attempt's sandbox (every 4 MiB, and at its end). */
      type: "data-file-copy";
      runId: string;
      attempt: number;
      sample?: number;
      /** Its name in /workspace/data. */
      name: string;
      bytesCopied: number;
      totalBytes: number;
    }
  | { type: "answer"; runId: string; result: AgentResult };

/** A message's text: a string, or text parts (other parts are refused). */
export type MessageText = string | Array<{ type: "text"; text: string }>;

/** Who a message is from, in the spellings LangChain accepts. */
export type MessageRole = "user" | "human" | "assistant" | "ai" | "system";

/** One input message: `{ role, content }`, a `[role, content]` pair, a string (a user message) or a LangChain message. */
export type ChatMessageInput =
  | { role: MessageRole; content: MessageText }
  | [MessageRole, MessageText]
  | string
  | import("@langchain/core/messages").BaseMessage;

/** The input of `agent.invoke()` and `agent.stream()`: the conversation so far, ending with the user's question. */
export type AgentInput = { messages: ChatMessageInput[] };

/** What invoke, stream and batch take: `{ messages }`, one string, one LangChain message, or an array of messages. */
export type AgentInputLike =
  | AgentInput
  | string
  | import("@langchain/core/messages").BaseMessage
  | ChatMessageInput[];

/**
 * The outcome of one turn: an answer (`status` "answered" or "escalated"), or, in code-action, a run
 * an approval hook interrupted (`status` "interrupted": see InterruptedResult). Check `status` first.
 */
export type AgentResult<Structured = unknown> = AnsweredResult<Structured> | InterruptedResult;

/**
 * A turn that answered: the answer, the conversation, and every attempt and tool call with
 * timings. `Structured` is the type of `structured`: the output of the agent's `responseFormat`.
 */
export type AnsweredResult<Structured = unknown> = ResultBase & {
  /** "answered", or "escalated" when the escalation model's program gave the answer. */
  status: "answered" | "escalated";
  /** The answer text (for code-action: the RESULT value as printed). */
  answer: string;
  /**
   * With `responseFormat`: the answer parsed as JSON and checked against it (typed from a zod
   * schema). Without: the answer's JSON value when it is JSON, else undefined.
   */
  structured: Structured;
  interrupt?: undefined;
};

/** Where an interrupted run stopped: the call waiting for a decision, and the state to resume it from. */
export type RunInterrupt = { runId: string; pending: PendingCall; state: RunState };

/**
 * A code-action turn an approval hook answered "interrupt": the call was not made, the program was
 * stopped and its container removed. Store `interrupt.state` (plain JSON) anywhere; continue with
 * `agent.resume(state, decision)` in any process. `__interrupt__` says the same in LangGraph's form.
 */
export type InterruptedResult = ResultBase & {
  status: "interrupted";
  interrupt: RunInterrupt;
  __interrupt__: [{ id: string; value: Omit<RunInterrupt, "state"> }];
  /** Empty: no answer yet. */
  answer: "";
  structured: never;
};

/** What every result has. */
type ResultBase = {
  /** The conversation, ending with the assistant's answer (an AIMessage); interrupted: as asked. */
  messages: import("@langchain/core/messages").BaseMessage[];
  runId: string;
  pattern: "code-action" | "tools";
  /** Code-action: every attempt of every sample. */
  attempts: Attempt[];
  /** Tools pattern: every tool call. Code-action: also found inside attempts. */
  toolCalls: ToolCallRecord[];
  /**
   * What the turn used: tokens summed over every model call (every attempt, sample and escalation;
   * undefined when no call reported any), model calls, tool calls, attempts, sandbox seconds, and
   * with `pricing` the cost.
   */
  usage: RunUsage;
  /** Code-action: the files the answering program saved under /workspace/out (empty otherwise). */
  files: OutputFile[];
  /** Code-action: entries of /workspace/out that did not come back (links, over a limit...), and why. */
  refusedFiles: RefusedOutputFile[];
  /** Whole milliseconds. */
  timings: { totalMs: number };
  /**
   * Code-action with state "thread": the thread the run used, and how its interpreter came back
   * when it had to: `restored` (its history re-executed: programs and milliseconds), or
   * `startedAfresh` (why it could not be; the model was told).
   */
  thread?: ThreadReport;
};

/** AgentResult.thread: the run's thread and how its interpreter came back, when it had to. */
export type ThreadReport = {
  id: string;
  restored?: { programs: number; ms: number };
  startedAfresh?: string;
};
