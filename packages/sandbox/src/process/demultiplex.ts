import { Writable } from "node:stream";

/**
 * Splits Docker's multiplexed exec stream (Tty false: 8-byte header, type 1 stdout / 2 stderr, big-endian
 * length, payload) into two writables, without copying payloads and with backpressure: pipe the exec
 * stream into it (`source.pipe(new Demultiplexer(stdout, stderr))`). Both targets are ended when the
 * source ends. (docker-modem's demuxStream copies the rest of its buffer for every frame, which makes
 * a flood of small frames quadratic, and it ignores backpressure.)
 */
export class Demultiplexer extends Writable {
  private readonly stdout: NodeJS.WritableStream;
  private readonly stderr: NodeJS.WritableStream;
  private readonly header = Buffer.alloc(8);
  private headerFilled = 0;
  private remaining = 0;
  private target: NodeJS.WritableStream | undefined;

  constructor(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream) {
    super();
    this.stdout = stdout;
    this.stderr = stderr;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    let offset = 0;
    const waits: NodeJS.WritableStream[] = [];
    while (offset < chunk.length) {
      if (this.remaining === 0) {
        const take = Math.min(8 - this.headerFilled, chunk.length - offset);
        chunk.copy(this.header, this.headerFilled, offset, offset + take);
        this.headerFilled += take;
        offset += take;
        if (this.headerFilled < 8) break;
        this.headerFilled = 0;
        const type = this.header.readUInt8(0);
        if (type !== 1 && type !== 2) {
          callback(new Error(`the exec stream is not multiplexed (frame type ${type}); was Tty set?`));
          return;
        }
        this.target = type === 1 ? this.stdout : this.stderr;
        this.remaining = this.header.readUInt32BE(4);
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - offset);
      const target = this.target!;
      if (!target.write(chunk.subarray(offset, offset + take)) && !waits.includes(target)) waits.push(target);
      this.remaining -= take;
      offset += take;
    }
    if (waits.length === 0) {
      callback();
      return;
    }
    let pending = waits.length;
    for (const target of waits) {
      target.once("drain", () => {
        pending -= 1;
        if (pending === 0) callback();
      });
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.stdout.end();
    this.stderr.end();
    callback();
  }
}

/**
 * A sink that counts every byte and keeps only the first `limit`: host memory stays flat however
 * much a command prints. Writes complete synchronously, so nothing queues in front of it.
 */
export class CappedSink extends Writable {
  private readonly limit: number;
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  seen = 0;

  constructor(limit: number) {
    super();
    this.limit = limit;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.seen += chunk.length;
    if (this.kept < this.limit) {
      const part = chunk.subarray(0, this.limit - this.kept);
      this.chunks.push(Buffer.from(part));
      this.kept += part.length;
    }
    callback();
  }

  get truncated(): boolean {
    return this.seen > this.limit;
  }

  contents(): Buffer {
    return Buffer.concat(this.chunks);
  }
}
