import type { AgentEvent } from "../types.ts";

/** Caps on the `program-output` events of one run (every attempt and sample together). */
export type LiveOutputLimits = { maxLines: number; maxBytes: number; maxLineBytes: number };

export const defaultLiveOutputLimits: LiveOutputLimits = {
  maxLines: 2000,
  maxBytes: 256 * 1024,
  maxLineBytes: 4096,
};

/** Which program and stream a chunk of output came from. */
export type OutputSource = { attempt: number; sample?: number; stream: "stdout" | "stderr" };

type ProgramOutputEvent = Extract<AgentEvent, { type: "program-output" }>;

/**
 * Turns the program's output chunks, as the bridge receives them, into `program-output` events, one
 * per line. Bounded per run: past `maxLines` lines or `maxBytes` bytes one last event says the
 * output was cut, and nothing more is kept or sent (the program is never slowed: the chunks are
 * already on the host). A line longer than `maxLineBytes` is sent in pieces.
 */
export class LiveOutput {
  readonly #limits: LiveOutputLimits;
  readonly #emit: (event: ProgramOutputEvent) => void;
  readonly #runId: string;
  /** The unfinished last line of each program's stream. */
  readonly #partial = new Map<string, { source: OutputSource; bytes: Buffer[]; size: number }>();
  #lines = 0;
  #bytes = 0;
  #cut = false;

  constructor(options: {
    runId: string;
    emit: (event: ProgramOutputEvent) => void;
    limits?: Partial<LiveOutputLimits>;
  }) {
    this.#runId = options.runId;
    this.#emit = options.emit;
    this.#limits = { ...defaultLiveOutputLimits, ...options.limits };
  }

  /** A chunk of a program's stdout or stderr. */
  feed(source: OutputSource, chunk: Buffer): void {
    if (this.#cut) return;
    const key = keyOf(source);
    let start = 0;
    while (start < chunk.length && !this.#cut) {
      const newline = chunk.indexOf(10, start);
      const end = newline === -1 ? chunk.length : newline;
      const pending = this.#partial.get(key) ?? { source, bytes: [], size: 0 };
      const room = this.#limits.maxLineBytes - pending.size;
      const piece = chunk.subarray(start, Math.min(end, start + room));
      pending.bytes.push(Buffer.from(piece));
      pending.size += piece.length;
      start += piece.length;
      if (newline === -1 && pending.size < this.#limits.maxLineBytes) {
        this.#partial.set(key, pending);
        return;
      }
      this.#partial.delete(key);
      this.#send(source, Buffer.concat(pending.bytes));
      if (start === newline) start += 1;
    }
  }

  /** The program ended: its unfinished lines are sent as they are. */
  flush(source: Omit<OutputSource, "stream">): void {
    for (const stream of ["stdout", "stderr"] as const) {
      const key = keyOf({ ...source, stream });
      const pending = this.#partial.get(key);
      this.#partial.delete(key);
      if (pending && pending.size > 0 && !this.#cut) this.#send(pending.source, Buffer.concat(pending.bytes));
    }
  }

  #send(source: OutputSource, line: Buffer): void {
    const { maxLines, maxBytes } = this.#limits;
    if (this.#lines + 1 > maxLines || this.#bytes + line.length > maxBytes) {
      this.#cut = true;
      this.#partial.clear();
      this.#emit({
        ...this.#identity(source),
        line: `[output cut: this run's live output is limited to ${maxLines} lines and ${maxBytes} bytes; the program goes on, and its result keeps its own output]`,
        cut: true,
      });
      return;
    }
    this.#lines += 1;
    this.#bytes += line.length;
    this.#emit({ ...this.#identity(source), line: line.toString("utf8").replace(/\r$/, "") });
  }

  #identity(source: OutputSource) {
    return {
      type: "program-output" as const,
      runId: this.#runId,
      attempt: source.attempt,
      ...(source.sample ? { sample: source.sample } : {}),
      stream: source.stream,
    };
  }
}

function keyOf(source: OutputSource): string {
  return `${source.sample ?? 0}:${source.attempt}:${source.stream}`;
}
