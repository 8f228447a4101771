/**
 * The frames the host and the relay exchange over the relay's stdin and stdout
 * (docs/bridge-protocol.md): one type byte, a 4-byte big-endian payload length, the payload.
 */

/** Frames the host sends. */
export const hostFrame = { start: "S", answer: "A", kill: "K" } as const;

/** Frames the relay sends, each with the largest payload the host accepts. */
export const relayFrame = {
  ready: "R",
  stdout: "O",
  stderr: "E",
  tail: "T",
  request: "Q",
  notice: "N",
  exit: "X",
  fatal: "F",
} as const;

export type Frame = { type: string; payload: Buffer };

const headerBytes = 5;
const headerLineLimit = 1024;

/** Encodes one frame. */
export function encodeFrame(type: string, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(headerBytes);
  header.write(type, 0, 1, "latin1");
  header.writeUInt32BE(body.length, 1);
  return Buffer.concat([header, body]);
}

/** A frame whose payload is a one-line JSON header, a newline and raw bytes ("Q", "A", "T"). */
export function encodeHeaderFrame(type: string, header: unknown, body: Buffer | string): Buffer {
  const bodyBytes = typeof body === "string" ? Buffer.from(body) : body;
  return encodeFrame(type, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), bodyBytes]));
}

/**
 * A header frame as pieces to write one after the other: the frame's start (type, length, header
 * line) and the body's strings as they are. Nothing is concatenated, so a large answer is copied
 * once (by the stream that writes it) instead of once per step of building one buffer.
 */
export function headerFrameParts(type: string, header: unknown, body: string[]): Array<Buffer | string> {
  const headerLine = Buffer.from(`${JSON.stringify(header)}\n`);
  const bodyBytes = body.reduce((sum, part) => sum + Buffer.byteLength(part), 0);
  const start = Buffer.alloc(headerBytes + headerLine.length);
  start.write(type, 0, 1, "latin1");
  start.writeUInt32BE(headerLine.length + bodyBytes, 1);
  headerLine.copy(start, headerBytes);
  return [start, ...body];
}

/**
 * Splits a byte stream into frames. Strict: an unknown type or a payload over its type's limit is an
 * error, thrown before the payload is buffered. The chunks of a frame still arriving are kept as
 * they came and joined once, when the whole frame is there (joining on every chunk would copy a
 * large frame over and over).
 */
export class FrameDecoder {
  readonly #limits: ReadonlyMap<string, number>;
  #chunks: Buffer[] = [];
  #bytes = 0;
  /** Bytes needed before the next frame (or its header) is whole. */
  #needed = headerBytes;

  constructor(limits: Record<string, number>) {
    this.#limits = new Map(Object.entries(limits));
  }

  /** Bytes received that do not yet make a whole frame. */
  get pendingBytes(): number {
    return this.#bytes;
  }

  push(chunk: Buffer): Frame[] {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (this.#bytes < this.#needed) return [];
    const buffer = this.#chunks.length === 1 ? chunk : Buffer.concat(this.#chunks, this.#bytes);
    const frames: Frame[] = [];
    let offset = 0;
    this.#needed = headerBytes;
    while (buffer.length - offset >= headerBytes) {
      const length = this.#frameLength(buffer, offset);
      if (buffer.length - offset < headerBytes + length) {
        this.#needed = headerBytes + length;
        break;
      }
      const type = String.fromCharCode(buffer[offset]!);
      frames.push({ type, payload: buffer.subarray(offset + headerBytes, offset + headerBytes + length) });
      offset += headerBytes + length;
    }
    // The rest is copied, so that it does not keep the frames before it alive while it waits.
    const rest = offset === buffer.length ? undefined : Buffer.from(buffer.subarray(offset));
    this.#chunks = rest ? [rest] : [];
    this.#bytes = rest?.length ?? 0;
    return frames;
  }

  /** The payload length of the frame at `offset`, checked against its type's limit. */
  #frameLength(buffer: Buffer, offset: number): number {
    const type = String.fromCharCode(buffer[offset]!);
    const length = buffer.readUInt32BE(offset + 1);
    const limit = this.#limits.get(type);
    if (limit === undefined) throw new Error(`unknown frame type ${JSON.stringify(type)}`);
    if (length > limit)
      throw new Error(`a ${JSON.stringify(type)} frame of ${length} bytes exceeds ${limit}`);
    return length;
  }
}

/** Splits a header frame's payload into its parsed JSON header (an object) and its body. */
export function splitHeaderFrame(payload: Buffer): { header: Record<string, unknown>; body: Buffer } {
  const newline = payload.subarray(0, headerLineLimit + 1).indexOf(10);
  if (newline < 0) throw new Error("a frame header is missing or longer than 1024 bytes");
  const header = parseJsonObject(payload.subarray(0, newline));
  return { header, body: payload.subarray(newline + 1) };
}

/** Parses a small JSON object from frame bytes, or throws. */
export function parseJsonObject(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (error) {
    throw new Error(`a frame holds invalid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error("a frame's JSON is not an object");
  }
  return value as Record<string, unknown>;
}
