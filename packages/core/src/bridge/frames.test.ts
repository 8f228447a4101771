import { describe, expect, test, vi } from "vitest";
import {
  encodeFrame,
  encodeHeaderFrame,
  FrameDecoder,
  headerFrameParts,
  splitHeaderFrame,
} from "./frames.ts";

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

  test("a large frame arriving in many chunks is joined once, not once per chunk", () => {
    const frame = encodeFrame("Q", Buffer.alloc(1024 * 1024, 120));
    const decoder = new FrameDecoder({ Q: 2 * 1024 * 1024 });
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const frames = [];
      for (let offset = 0; offset < frame.length; offset += 16 * 1024)
        frames.push(...decoder.push(frame.subarray(offset, offset + 16 * 1024)));
      expect(frames).toHaveLength(1);
      expect(frames[0]?.payload.equals(Buffer.alloc(1024 * 1024, 120))).toBe(true);
      expect(concat).toHaveBeenCalledTimes(1);
    } finally {
      concat.mockRestore();
    }
  });

  test("refuses unknown types and oversized payloads at the header", () => {
    expect(() => new FrameDecoder({ O: 10 }).push(encodeFrame("Z"))).toThrow(/unknown frame type/);
    expect(() => new FrameDecoder({ O: 10 }).push(encodeFrame("O", "x".repeat(11)).subarray(0, 5))).toThrow(
      /exceeds 10/,
    );
  });

  test("a header frame written in parts is the same bytes as one built whole", () => {
    const body = ['{"ok":true,"value":', JSON.stringify("é ü 日本"), "}"];
    const parts = headerFrameParts("A", { id: "a1" }, body);
    const written = Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part)));
    expect(written.equals(encodeHeaderFrame("A", { id: "a1" }, body.join("")))).toBe(true);
  });

  test("a header line must be short JSON", () => {
    expect(splitHeaderFrame(Buffer.from('{"id":"a"}\nbody')).body.toString()).toBe("body");
    expect(() => splitHeaderFrame(Buffer.from(`${"x".repeat(2000)}\n`))).toThrow(/missing or longer/);
    expect(() => splitHeaderFrame(Buffer.from("[1]\n"))).toThrow(/not an object/);
  });
});
