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
 * Splits a byte stream into frames. Strict: an unknown type or a payload over its type's limit is an
 * error, thrown before the payload is buffered.
 */
export class FrameDecoder {
  readonly #limits: ReadonlyMap<string, number>;
  #buffer: Buffer = Buffer.alloc(0);

  constructor(limits: Record<string, number>) {
    this.#limits = new Map(Object.entries(limits));
  }

  /** Bytes received that do not yet make a whole frame. */
  get pendingBytes(): number {
    return this.#buffer.length;
  }

  push(chunk: Buffer): Frame[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const frames: Frame[] = [];
    let offset = 0;
    while (this.#buffer.length - offset >= headerBytes) {
      const type = String.fromCharCode(this.#buffer[offset]!);
      const length = this.#buffer.readUInt32BE(offset + 1);
      const limit = this.#limits.get(type);
      if (limit === undefined) throw new Error(`unknown frame type ${JSON.stringify(type)}`);
      if (length > limit)
        throw new Error(`a ${JSON.stringify(type)} frame of ${length} bytes exceeds ${limit}`);
      if (this.#buffer.length - offset < headerBytes + length) break;
      frames.push({
        type,
        payload: this.#buffer.subarray(offset + headerBytes, offset + headerBytes + length),
      });
      offset += headerBytes + length;
    }
    this.#buffer = offset === this.#buffer.length ? Buffer.alloc(0) : this.#buffer.subarray(offset);
    return frames;
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
