import { PassThrough, Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import { CappedSink, Demultiplexer } from "./demultiplex.ts";

function frame(type: 1 | 2, payload: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt8(type, 0);
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe("Demultiplexer", () => {
  it("splits frames cut anywhere, binary-safe", async () => {
    const all = Buffer.concat([
      frame(1, Buffer.from([0, 1, 2, 255])),
      frame(2, Buffer.from("error")),
      frame(1, Buffer.from("more")),
    ]);
    // One byte at a time: headers and payloads split across chunks.
    const source = Readable.from([...all].map((byte) => Buffer.from([byte])));
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    source.pipe(new Demultiplexer(stdout, stderr));
    const [out, err] = await Promise.all([collect(stdout), collect(stderr)]);
    expect(out).toEqual(Buffer.from([0, 1, 2, 255, ...Buffer.from("more")]));
    expect(err.toString()).toBe("error");
  });

  it("refuses a stream that is not multiplexed", async () => {
    const demultiplexer = new Demultiplexer(new PassThrough(), new PassThrough());
    const source = Readable.from([Buffer.from("plain text, no header")]);
    source.pipe(demultiplexer);
    await expect(finished(demultiplexer)).rejects.toThrow(/not multiplexed/);
  });
});

describe("CappedSink", () => {
  it("keeps the first bytes, counts the rest, and flags truncation", async () => {
    const sink = new CappedSink(10);
    Readable.from([Buffer.from("0123456"), Buffer.from("789abc"), Buffer.from("def")]).pipe(sink);
    await finished(sink);
    expect(sink.contents().toString()).toBe("0123456789");
    expect(sink.seen).toBe(16);
    expect(sink.truncated).toBe(true);
  });
});
