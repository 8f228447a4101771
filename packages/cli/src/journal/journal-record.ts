import type {
  AgentEvent,
  AgentResult,
  Attempt,
  PendingCall,
  RunRecord as ReplayableRun,
  RunUsage,
  ToolCallRecord,
} from "@codeaction/core";
import { redactSecrets } from "@codeaction/core";
import type { CsvTable } from "../data-files/csv-table.ts";
import type { ModelChoice } from "../model-choice.ts";
import { type RecordedOutputFile, recordOutputFile } from "../output/write-output-files.ts";
import { fitRecord, keepFirst, keepHead, keepTail, recordLimits } from "./record-limits.ts";

/** A tool result bigger than this (as JSON) is kept in the record as a preview and its size. */
export const toolResultPreviewCharacters = 2000;

export type RecordedToolCall = Omit<ToolCallRecord, "result"> & {
  result?: unknown;
  /** The first characters of the result's JSON, when the whole result is too big to keep. */
  resultPreview?: string;
  /** The size of the result's JSON, when only a preview is kept. */
  resultCharacters?: number;
};

/**
 * An attempt as the record keeps it: the end of its output and the start of its program, reply
 * and RESULT (each `...Omitted` says how many characters were cut), its first tool calls. An
 * attempt seen only through the run's events (the run failed before the agent returned it) has
 * no model reply or timings and says `fromEvents`.
 */
export type RecordedAttempt = Omit<
  Attempt,
  "toolCalls" | "modelReply" | "timings" | "truncated" | "stdoutBase64" | "stderrBase64"
> &
  Partial<Pick<Attempt, "modelReply" | "timings" | "truncated" | "stdoutBase64" | "stderrBase64">> & {
    toolCalls: RecordedToolCall[];
    programOmitted?: number;
    modelReplyOmitted?: number;
    stdoutOmitted?: number;
    stderrOmitted?: number;
    resultOmitted?: number;
    toolCallsOmitted?: number;
    fromEvents?: true;
  };

/** What the journal keeps of a run that waits for a decision: the pending call and the signed state. */
export type KeptRun = { pending: PendingCall; state: unknown };

/**
 * What one `ask` did, as written to the journal and printed by --json: the question, the model,
 * the inputs, every attempt's program with its output and tool calls, the status and the timings.
 */
export type JournalRecord = {
  version: 1;
  runId?: string;
  startedAt: string;
  finishedAt?: string;
  question: string;
  model: { kind: "live"; name: string; baseUrl?: string } | { kind: "replay"; file: string };
  pattern: "code-action" | "tools";
  image?: string;
  csv: { file: string; tool: string; rows: number; columns: { name: string; type: string }[] }[];
  servers: Record<string, string>;
  /** "aborted": the turn was cancelled (Ctrl-C). "interrupted": an approval answered "interrupt". */
  status: "ok" | "escalated" | "failed" | "aborted" | "interrupted";
  answer?: string;
  error?: { code?: string; message: string };
  attempts: RecordedAttempt[];
  /** Earlier attempts left out (the record keeps the last ones). */
  attemptsOmitted?: number;
  toolCalls: RecordedToolCall[];
  toolCallsOmitted?: number;
  /** Characters cut from the end of the answer. */
  answerOmitted?: number;
  /** The files the program saved under /workspace/out: names, sizes and hashes (and where they were written). */
  files?: RecordedOutputFile[];
  /** Entries of /workspace/out that did not come back, and why. */
  refusedFiles?: { name: string; reason: string }[];
  timings: { totalMs?: number; setupMs?: number; turnMs?: number };
  /** What the run used (`result.usage`; a run stopped by its budget: the usage until then). */
  usage?: RunUsage;
  /**
   * What `codeaction replay` re-executes: the answering program, its stubs, seed and call log
   * (the library's recordRun), when within the journal's limit (journal/replay-record.ts).
   */
  replay?: ReplayableRun;
  /** Why `replay` is not kept (over the limit, a result kept as a digest only, no call log). */
  replayOmitted?: string;
  /** The command that made the run when not `ask`: "desk" for a question asked on the desk's page. */
  command?: "desk" | "chat";
  /** A run answered "later": the call that waits and the signed state `codeaction resume` continues. */
  resume?: KeptRun;
  /** Why an interrupted run's state is not kept (over the journal's limit). */
  resumeOmitted?: string;
  /** A run continued by `codeaction resume`: the decision its pending call got. */
  resumed?: {
    decision: "approved" | "denied";
    reason?: string;
    tool?: string;
    argsDigest?: string;
    /** The resume was refused before anything started (ResumeStateError's reason): the run still waits. */
    refused?: string;
  };
};

export function createJournalRecord(options: {
  question: string;
  model: ModelChoice;
  pattern: "code-action" | "tools";
  image?: string;
  tables: CsvTable[];
  toolNames: string[];
  servers: Record<string, string>;
}): JournalRecord {
  // Keys are created in the order they read best in the journal; unset ones are left out of the JSON.
  return {
    version: 1,
    runId: undefined,
    startedAt: new Date().toISOString(),
    finishedAt: undefined,
    question: keepHead(options.question, recordLimits.textCharacters).text,
    model:
      options.model.kind === "replay"
        ? { kind: "replay", file: options.model.file }
        : {
            kind: "live",
            name: options.model.model,
            ...(options.model.baseUrl ? { baseUrl: redactSecrets(options.model.baseUrl) } : {}),
          },
    pattern: options.pattern,
    ...(options.image ? { image: options.image } : {}),
    csv: options.tables.map((table, index) => ({
      file: table.file,
      ...(table.format === "csv" ? {} : { format: table.format }),
      tool: options.toolNames[index] ?? `load_${table.name}`,
      rows: table.rowCount,
      columns: table.columns.map((column) => ({ name: column.name, type: column.type })),
    })),
    // Command lines and URLs can hold secrets (GITHUB_TOKEN=... cmd, https://user:key@host/?token=).
    servers: Object.fromEntries(
      Object.entries(options.servers).map(([name, commandLine]) => [name, redactSecrets(commandLine)]),
    ),
    status: "failed",
    answer: undefined,
    error: undefined,
    attempts: [],
    toolCalls: [],
    timings: {},
  };
}

export function recordToolCall(call: ToolCallRecord): RecordedToolCall {
  const { result, ...rest } = call;
  const kept = rest.error === undefined ? rest : { ...rest, error: redactSecrets(rest.error) };
  if (result === undefined) return kept;
  const json = JSON.stringify(result) ?? String(result);
  if (json.length <= toolResultPreviewCharacters) return { ...kept, result };
  return {
    ...kept,
    resultPreview: json.slice(0, toolResultPreviewCharacters),
    resultCharacters: json.length,
  };
}

/** The first `recordLimits.toolCalls` calls, as recorded, and how many more there were. */
function recordToolCalls(calls: readonly ToolCallRecord[]): {
  toolCalls: RecordedToolCall[];
  toolCallsOmitted?: number;
} {
  const { items, omitted } = keepFirst(calls, recordLimits.toolCalls);
  return { toolCalls: items.map(recordToolCall), ...(omitted ? { toolCallsOmitted: omitted } : {}) };
}

/** An attempt within the record's limits: see RecordedAttempt. */
export function recordAttempt(attempt: Attempt | RecordedAttempt): RecordedAttempt {
  const limits = recordLimits;
  const program = keepHead(attempt.program, limits.programCharacters);
  const stdout = keepTail(attempt.stdout, limits.outputTailCharacters);
  const stderr = keepTail(attempt.stderr, limits.outputTailCharacters);
  const reply =
    attempt.modelReply === undefined ? undefined : keepHead(attempt.modelReply, limits.modelReplyCharacters);
  const result = attempt.result === undefined ? undefined : keepHead(attempt.result, limits.textCharacters);
  const recorded: RecordedAttempt = {
    ...attempt,
    program: program.text,
    ...(reply ? { modelReply: reply.text } : {}),
    stdout: stdout.text,
    stderr: stderr.text,
    ...(result ? { result: result.text } : {}),
    ...(attempt.invalidResult === undefined
      ? {}
      : { invalidResult: keepHead(attempt.invalidResult, limits.errorCharacters).text }),
    ...recordToolCalls(attempt.toolCalls as ToolCallRecord[]),
    ...omitted({ programOmitted: program.omitted, modelReplyOmitted: reply?.omitted }),
    ...omitted({
      stdoutOmitted: stdout.omitted,
      stderrOmitted: stderr.omitted,
      resultOmitted: result?.omitted,
    }),
  };
  // An attempt's call log (durable runs) can copy megabytes of results: the record keeps what a
  // replay needs once, bounded, as `replay` (not in every attempt).
  delete (recorded as RecordedAttempt & { callLog?: unknown }).callLog;
  // The exact bytes of a stream that is not UTF-8 stay only while its whole text does.
  if (stdout.omitted || (recorded.stdoutBase64?.length ?? 0) > limits.outputTailCharacters * 2)
    delete recorded.stdoutBase64;
  if (stderr.omitted || (recorded.stderrBase64?.length ?? 0) > limits.outputTailCharacters * 2)
    delete recorded.stderrBase64;
  return recorded;
}

function omitted(counts: Record<string, number | undefined>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).filter(([, count]) => count !== undefined)) as Record<
    string,
    number
  >;
}

/** The last `recordLimits.attempts` attempts, each within the record's limits. */
function recordAttempts(record: JournalRecord, attempts: readonly (Attempt | RecordedAttempt)[]): void {
  const cut = Math.max(0, attempts.length - recordLimits.attempts);
  record.attempts = attempts.slice(cut).map(recordAttempt);
  if (cut > 0) record.attemptsOmitted = cut;
  else delete record.attemptsOmitted;
}

/** Ends the record: its answer within the limits, and the whole record cut to fit (fitRecord). */
function finishRecord(record: JournalRecord): void {
  if (record.answer !== undefined) {
    const answer = keepHead(record.answer, recordLimits.textCharacters);
    record.answer = answer.text;
    if (answer.omitted) record.answerOmitted = answer.omitted;
  }
  record.finishedAt = new Date().toISOString();
  Object.assign(record, fitRecord(record));
}

/**
 * Follows the run through its events, so that a run that fails before the agent returns its
 * attempts (a model that fails, a scripted model that runs out) still has its runId and each
 * attempt's program, exit, output tails and tool calls in its record.
 */
export function recordEvent(record: JournalRecord, event: AgentEvent): void {
  if ("runId" in event && record.runId === undefined) record.runId = event.runId;
  const current = record.attempts.at(-1);
  if (event.type === "program-start") {
    record.attempts.push(
      recordAttempt({
        attempt: event.attempt,
        ...(event.sample === undefined ? {} : { sample: event.sample }),
        program: event.program,
        stdout: "",
        stderr: "",
        exitCode: null,
        // Until its program-end: a run that ends now ended it.
        status: "aborted",
        toolCalls: [],
        fromEvents: true,
      }),
    );
  } else if (event.type === "tool-result" && current?.fromEvents && current.attempt === event.attempt) {
    const { type: _type, runId: _runId, attempt: _attempt, sample: _sample, ...call } = event;
    if (current.toolCalls.length < recordLimits.toolCalls) current.toolCalls.push(recordToolCall(call));
    else current.toolCallsOmitted = (current.toolCallsOmitted ?? 0) + 1;
  } else if (event.type === "program-end" && current?.fromEvents && current.attempt === event.attempt) {
    Object.assign(
      current,
      recordAttempt({
        ...current,
        status: event.status,
        exitCode: event.exitCode,
        stdout: event.stdoutTail,
        stderr: event.stderrTail,
      }),
    );
  }
}

/** Fills the record from a finished turn. */
export function completeJournalRecord(record: JournalRecord, result: AgentResult): void {
  record.runId = result.runId;
  record.status = result.status === "answered" ? "ok" : result.status;
  record.answer = result.answer;
  recordAttempts(record, result.attempts);
  const calls = recordToolCalls(result.toolCalls);
  record.toolCalls = calls.toolCalls;
  if (calls.toolCallsOmitted) record.toolCallsOmitted = calls.toolCallsOmitted;
  if (result.files.length > 0) record.files = result.files.map(recordOutputFile);
  if (result.refusedFiles.length > 0) record.refusedFiles = result.refusedFiles;
  record.usage = result.usage;
  finishRecord(record);
}

/**
 * Fills the record from a failed turn: the error (secrets redacted), and the attempts the error
 * carries, or else those seen through the events (recordEvent): whatever ended the run, its
 * attempts stay on record. Loads @codeaction/core only here (it is loaded by then): `ask` imports
 * this module before LangChain loads, so that its sandbox's container starts first.
 */
export async function failJournalRecord(record: JournalRecord, error: unknown): Promise<void> {
  const { AbortError } = await import("@codeaction/core");
  record.status = AbortError.isInstance(error) ? "aborted" : "failed";
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  record.error = {
    ...(typeof code === "string" ? { code } : {}),
    message: keepHead(redactSecrets(message), recordLimits.errorCharacters).text,
  };
  const attempts = (error as { attempts?: unknown }).attempts;
  if (
    Array.isArray(attempts) &&
    attempts.length >= record.attempts.length &&
    attempts.every((attempt) => typeof attempt === "object" && attempt && "program" in attempt)
  ) {
    recordAttempts(record, attempts as Attempt[]);
  }
  const runId = (error as { runId?: unknown }).runId;
  if (typeof runId === "string") record.runId = runId;
  const usage = (error as { usage?: RunUsage }).usage;
  if (typeof usage === "object" && usage !== null) record.usage = usage;
  finishRecord(record);
}

/**
 * JSON that is also safe on a terminal: JSON.stringify already escapes C0 controls (ESC becomes
 * \u001b); this also escapes C1 controls and bidirectional overrides, which it leaves raw.
 */
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
