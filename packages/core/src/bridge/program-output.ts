import { isUtf8 } from "node:buffer";
import { splitHeaderFrame } from "./frames.ts";

/**
 * The program's stdout and stderr as the relay forwards them (frames O, E and T): the head of each
 * stream up to the cap, then the tail the relay kept and the count of bytes it dropped between.
 */
export class ProgramOutput {
  readonly #limit: number;
  readonly #stdout: StreamCapture = { name: "stdout", chunks: [], bytes: 0, dropped: 0 };
  readonly #stderr: StreamCapture = { name: "stderr", chunks: [], bytes: 0, dropped: 0 };
  #overflow = false;
  /** The relay saw the last stdout RESULT: line fall (wholly or partly) into the dropped bytes. */
  #resultLost = false;

  /** `limit`: bytes of each stream's head kept. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** A chunk of the program's output (frame O or E); bytes past the cap are dropped. */
  capture(stream: "stdout" | "stderr", payload: Buffer): void {
    const capture = stream === "stdout" ? this.#stdout : this.#stderr;
    const room = this.#limit - capture.bytes;
    if (payload.length > room) this.#overflow = true;
    const kept = payload.length > room ? payload.subarray(0, Math.max(0, room)) : payload;
    if (kept.length === 0) return;
    capture.chunks.push(Buffer.from(kept));
    capture.bytes += kept.length;
  }

  /** The kept tail of a stream and how many bytes were dropped (frame T, once per stream). */
  captureTail(payload: Buffer): void {
    const { header, body } = splitHeaderFrame(payload);
    const stream =
      header.stream === "stdout" ? this.#stdout : header.stream === "stderr" ? this.#stderr : undefined;
    const dropped = header.dropped;
    if (
      !stream ||
      stream.tail ||
      typeof dropped !== "number" ||
      !Number.isSafeInteger(dropped) ||
      dropped < 0
    ) {
      throw new Error("a tail frame is malformed or repeated");
    }
    stream.tail = Buffer.from(body);
    stream.dropped = dropped;
    if (header.resultLost === true && stream === this.#stdout) this.#resultLost = true;
  }

  get truncated(): boolean {
    return this.#overflow || this.#stdout.dropped > 0 || this.#stderr.dropped > 0;
  }

  get resultLost(): boolean {
    return this.#resultLost;
  }

  /** A stream as text, and as exact bytes (base64) when they are not valid UTF-8. */
  assemble(stream: "stdout" | "stderr"): { text: string; base64?: string } {
    return assemble(stream === "stdout" ? this.#stdout : this.#stderr);
  }
}

/** The first `limit` bytes of a stream (the relay's own stderr, for the log). */
export class StreamHead {
  readonly #limit: number;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(chunk: Buffer | string): void {
    if (this.#bytes >= this.#limit) return;
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    const kept = bytes.subarray(0, this.#limit - this.#bytes);
    this.#chunks.push(Buffer.from(kept));
    this.#bytes += kept.length;
  }

  get bytes(): number {
    return this.#bytes;
  }

  text(): string {
    return Buffer.concat(this.#chunks).toString("utf8");
  }
}

type StreamCapture = { name: string; chunks: Buffer[]; bytes: number; tail?: Buffer; dropped: number };

/**
 * The captured head, a marker where bytes were dropped, then the kept tail: as text, and as exact
 * bytes (base64) when they are not valid UTF-8 (the text then holds U+FFFD in their place).
 */
function assemble(stream: StreamCapture): { text: string; base64?: string } {
  const parts = [...stream.chunks];
  if (stream.dropped > 0) {
    // A line the cap cut short is marked "cut here", so it is never read as a whole RESULT line.
    const endsLine = stream.bytes === 0 || stream.chunks.at(-1)?.at(-1) === 10;
    const text = endsLine
      ? `[... ${stream.dropped} bytes of ${stream.name} omitted ...]\n`
      : `\n[... cut here: ${stream.dropped} bytes of ${stream.name} omitted ...]\n`;
    parts.push(Buffer.from(text));
  }
  if (stream.tail) parts.push(stream.tail);
  const bytes = Buffer.concat(parts);
  const text = new TextDecoder("utf-8").decode(bytes);
  return isUtf8(bytes) ? { text } : { text, base64: bytes.toString("base64") };
}
