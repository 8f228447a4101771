import { canonicalJson, sha256Hex } from "./canonical-json.ts";

/**
 * One bridged call of a code-action run, in the order the calls reached the host. Plain JSON: it
 * travels in an interrupted run's state and in a run record.
 */
export type CallLogEntry = {
  /** 1 for the run's first call that reached a tool or its approval, then 2, 3, ... */
  sequence: number;
  tool: string;
  /** The arguments as the program sent them, when their canonical JSON is within the log's limits. */
  args?: unknown;
  /** SHA-256 (hex) of the arguments' canonical JSON (canonical-json.ts): what calls are compared by. */
  argsDigest: string;
  /** Bytes of the arguments' canonical JSON. */
  argsBytes: number;
  /** "ok" (the program got `result`), "error" (it got a ToolError with `error`), "denied" (ToolDenied with `error`). */
  status: "ok" | "error" | "denied";
  /** The exact JSON text the program received, when within the log's limits; else see resultRef. */
  result?: string;
  /** A result too large to copy into the log: its size and digest (see the run store for its bytes). */
  resultRef?: { sha256: string; bytes: number };
  /** The message of the ToolError or ToolDenied the program got. */
  error?: string;
  durationMs: number;
};

/** How much of a run's calls the log copies (results past these are kept as a reference and digest). */
export type CallLogLimits = {
  /** Largest result (JSON text, characters) copied into the log (default 1 MiB). */
  maxResultCharacters: number;
  /** Characters of arguments and results one run's log may copy in all (default 8 MiB). */
  maxLogCharacters: number;
};

export const defaultCallLogLimits: CallLogLimits = {
  maxResultCharacters: 1024 * 1024,
  maxLogCharacters: 8 * 1024 * 1024,
};

/** The call as the program made it: its tool and arguments, compared by digest. */
export type LoggedCall = { tool: string; argsDigest: string; argsText: string };

/** A call's identity for comparisons, from its tool and arguments. */
export function loggedCall(tool: string, args: unknown): LoggedCall {
  const argsText = canonicalJson(args);
  return { tool, argsDigest: sha256Hex(argsText), argsText };
}

/** How one call ended, as the log keeps it. */
export type CallEnding = { status: "ok"; text: string } | { status: "error" | "denied"; error: string };

/**
 * A run's call log while it runs: entries by sequence, copied within a budget (the calls are already
 * bounded by maxToolCalls). Entries taken over from an earlier log (a resumed run) are kept as they are.
 */
export class CallLogRecorder {
  readonly #limits: CallLogLimits;
  readonly #entries = new Map<number, CallLogEntry>();
  #characters = 0;

  constructor(limits: Partial<CallLogLimits> = {}) {
    this.#limits = { ...defaultCallLogLimits, ...limits };
  }

  /** An entry of an earlier log, answered from it again (kept as it was). */
  adopt(entry: CallLogEntry): void {
    this.#entries.set(entry.sequence, entry);
  }

  /** Records how call `sequence` ended. */
  record(sequence: number, call: LoggedCall, ending: CallEnding, durationMs: number): CallLogEntry {
    const entry: CallLogEntry = {
      sequence,
      tool: call.tool,
      argsDigest: call.argsDigest,
      argsBytes: Buffer.byteLength(call.argsText),
      status: ending.status,
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
    if (this.#take(call.argsText.length, this.#limits.maxResultCharacters)) {
      entry.args = JSON.parse(call.argsText);
    }
    if (ending.status === "ok") {
      if (this.#take(ending.text.length, this.#limits.maxResultCharacters)) entry.result = ending.text;
      else entry.resultRef = { sha256: sha256Hex(ending.text), bytes: Buffer.byteLength(ending.text) };
    } else {
      entry.error = ending.error.slice(0, 4000);
    }
    this.#entries.set(sequence, entry);
    return entry;
  }

  /** The entries so far, by sequence. */
  entries(): CallLogEntry[] {
    return [...this.#entries.values()].sort((left, right) => left.sequence - right.sequence);
  }

  /** Whether `characters` more fit the budget (and a single value's limit); taken when they do. */
  #take(characters: number, single: number): boolean {
    if (characters > single || this.#characters + characters > this.#limits.maxLogCharacters) return false;
    this.#characters += characters;
    return true;
  }
}
