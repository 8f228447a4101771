import type { AgentResult, Attempt, ToolCallRecord } from "@codeaction/core";
import type { CsvTable } from "./csv/csv-table.ts";
import type { ModelChoice } from "./model-choice.ts";
import { type RecordedOutputFile, recordOutputFile } from "./output/write-output-files.ts";

/** A tool result bigger than this (as JSON) is kept in the record as a preview and its size. */
export const toolResultPreviewCharacters = 2000;

export type RecordedToolCall = Omit<ToolCallRecord, "result"> & {
  result?: unknown;
  /** The first characters of the result's JSON, when the whole result is too big to keep. */
  resultPreview?: string;
  /** The size of the result's JSON, when only a preview is kept. */
  resultCharacters?: number;
};

export type RecordedAttempt = Omit<Attempt, "toolCalls"> & { toolCalls: RecordedToolCall[] };

/**
 * What one `ask` did, as written to the journal and printed by --json: the question, the model,
 * the inputs, every attempt's program with its output and tool calls, the status and the timings.
 */
export type RunRecord = {
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
  /** "aborted": the turn was cancelled (Ctrl-C). */
  status: "ok" | "escalated" | "failed" | "aborted";
  answer?: string;
  error?: { code?: string; message: string };
  attempts: RecordedAttempt[];
  toolCalls: RecordedToolCall[];
  /** The files the program saved under /workspace/out: names, sizes and hashes (and where they were written). */
  files?: RecordedOutputFile[];
  /** Entries of /workspace/out that did not come back, and why. */
  refusedFiles?: { name: string; reason: string }[];
  timings: { totalMs?: number; setupMs?: number; turnMs?: number };
};

export function createRunRecord(options: {
  question: string;
  model: ModelChoice;
  pattern: "code-action" | "tools";
  image?: string;
  tables: CsvTable[];
  toolNames: string[];
  servers: Record<string, string>;
}): RunRecord {
  // Keys are created in the order they read best in the journal; unset ones are left out of the JSON.
  return {
    version: 1,
    runId: undefined,
    startedAt: new Date().toISOString(),
    finishedAt: undefined,
    question: options.question,
    model:
      options.model.kind === "replay"
        ? { kind: "replay", file: options.model.file }
        : {
            kind: "live",
            name: options.model.model,
            ...(options.model.baseUrl ? { baseUrl: options.model.baseUrl } : {}),
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
    servers: options.servers,
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
  if (result === undefined) return rest;
  const json = JSON.stringify(result) ?? String(result);
  if (json.length <= toolResultPreviewCharacters) return { ...rest, result };
  return {
    ...rest,
    resultPreview: json.slice(0, toolResultPreviewCharacters),
    resultCharacters: json.length,
  };
}

export function recordAttempt(attempt: Attempt): RecordedAttempt {
  return { ...attempt, toolCalls: attempt.toolCalls.map(recordToolCall) };
}

/** Fills the record from a finished turn. */
export function completeRunRecord(record: RunRecord, result: AgentResult): void {
  record.runId = result.runId;
  record.status = result.status;
  record.answer = result.answer;
  record.attempts = result.attempts.map(recordAttempt);
  record.toolCalls = result.toolCalls.map(recordToolCall);
  if (result.files.length > 0) record.files = result.files.map(recordOutputFile);
  if (result.refusedFiles.length > 0) record.refusedFiles = result.refusedFiles;
  record.finishedAt = new Date().toISOString();
}

/**
 * Fills the record from a failed turn: the error, and its attempts when it carries them. Loads
 * @codeaction/core only here (it is loaded by then): `ask` imports this module before LangChain
 * loads, so that its sandbox's container starts first.
 */
export async function failRunRecord(record: RunRecord, error: unknown): Promise<void> {
  const { AbortError } = await import("@codeaction/core");
  record.status = AbortError.isInstance(error) ? "aborted" : "failed";
  const code = (error as { code?: unknown }).code;
  record.error = {
    ...(typeof code === "string" ? { code } : {}),
    message: error instanceof Error ? error.message : String(error),
  };
  const attempts = (error as { attempts?: unknown }).attempts;
  if (
    Array.isArray(attempts) &&
    attempts.every((attempt) => typeof attempt === "object" && attempt && "program" in attempt)
  ) {
    record.attempts = (attempts as Attempt[]).map(recordAttempt);
  }
  const runId = (error as { runId?: unknown }).runId;
  if (typeof runId === "string") record.runId = runId;
  record.finishedAt = new Date().toISOString();
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
