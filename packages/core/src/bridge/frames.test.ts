import { describe, expect, test } from "vitest";
import { encodeFrame, encodeHeaderFrame, FrameDecoder, splitHeaderFrame } from "./frames.ts";

describe("FrameDecoder", () => {
  test("reassembles frames split at any byte", () => {
    const bytes = Buffer.concat([
      encodeFrame("O", "hello"),
      encodeHeaderFrame("Q", { id: "a" }, "{}"),
      encodeFrame("K"),
    ]);
    for (let size = 1; size <= bytes.length; size += 1) {
      const decoder = new FrameDecoder({ O: 100, Q: 100, K: 0 });
      const frames = [];
      for (let offset = 0; offset < bytes.length; offset += size) {
        frames.push(...decoder.push(bytes.subarray(offset, offset + size)));
      }
      expect(frames.map((frame) => [frame.type, frame.payload.toString()])).toEqual([
        ["O", "hello"],
        ["Q", '{"id":"a"}\n{}'],
        ["K", ""],
      ]);
      expect(decoder.pendingBytes).toBe(0);
    }
  });

  test("refuses unknown types and oversized payloads at the header", () => {
    expect(() => new FrameDecoder({ O: 10 }).push(encodeFrame("Z"))).toThrow(/unknown frame type/);
    expect(() => new FrameDecoder({ O: 10 }).push(encodeFrame("O", "x".repeat(11)).subarray(0, 5))).toThrow(
      /exceeds 10/,
    );
  });

  test("a header line must be short JSON", () => {
    expect(splitHeaderFrame(Buffer.from('{"id":"a"}\nbody')).body.toString()).toBe("body");
    expect(() => splitHeaderFrame(Buffer.from(`${"x".repeat(2000)}\n`))).toThrow(/missing or longer/);
    expect(() => splitHeaderFrame(Buffer.from("[1]\n"))).toThrow(/not an object/);
  });
});
