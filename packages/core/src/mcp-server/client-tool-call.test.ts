import { describe, expect, it } from "vitest";
import type { ToolCallRecord } from "../types.ts";
import { clientToolCall } from "./client-tool-call.ts";

const call = (extra: Partial<ToolCallRecord>): ToolCallRecord => ({
  id: "c1",
  tool: "lookup",
  args: { id: "A-1" },
  status: "ok",
  durationMs: 12.6,
  ...extra,
});

describe("a tool call as run_program reports it", () => {
  it("drops the bridge id, rounds the duration and redacts a wrapped server's credentials in an error", () => {
    const reported = clientToolCall(
      call({ status: "error", error: "GET https://user:key@shop.example.invalid/v1?token=abc failed" }),
    );
    expect(reported).toEqual({
      tool: "lookup",
      args: { id: "A-1" },
      status: "error",
      durationMs: 13,
      error: "GET https://[redacted]@shop.example.invalid/v1?[redacted] failed",
    });
  });

  it("keeps a result or arguments over 2000 characters of JSON as a preview and their size", () => {
    const reported = clientToolCall(call({ args: { text: "a".repeat(3000) }, result: "r".repeat(3000) }));
    expect(reported).not.toHaveProperty("result");
    expect(reported).toMatchObject({ resultPreview: `"${"r".repeat(1999)}`, resultCharacters: 3002 });
    expect(reported.args).toBe(`{"text":"${"a".repeat(1991)}... (3011 characters)`);
  });
});
