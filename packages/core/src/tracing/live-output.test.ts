import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../types.ts";
import { LiveOutput } from "./live-output.ts";

type OutputEvent = Extract<AgentEvent, { type: "program-output" }>;

function collect(limits?: { maxLines?: number; maxBytes?: number; maxLineBytes?: number }) {
  const events: OutputEvent[] = [];
  const live = new LiveOutput({
    runId: "run_1",
    emit: (event) => events.push(event),
    ...(limits ? { limits } : {}),
  });
  return {
    live,
    events,
    lines: () => events.map((event) => `${event.stream}:${event.line}${event.cut ? " (cut)" : ""}`),
  };
}

describe("LiveOutput", () => {
  it("sends whole lines as they complete, across chunks, per stream and attempt", () => {
    const { live, lines } = collect();
    live.feed({ attempt: 1, stream: "stdout" }, Buffer.from("one\ntw"));
    live.feed({ attempt: 1, stream: "stderr" }, Buffer.from("warn"));
    expect(lines()).toEqual(["stdout:one"]);
    live.feed({ attempt: 1, stream: "stdout" }, Buffer.from("o\r\nthree"));
    live.feed({ attempt: 1, stream: "stderr" }, Buffer.from("ing\n"));
    expect(lines()).toEqual(["stdout:one", "stdout:two", "stderr:warning"]);
    live.flush({ attempt: 1 });
    expect(lines().at(-1)).toBe("stdout:three");
  });

  it("sends a line longer than maxLineBytes in pieces", () => {
    const { live, lines } = collect({ maxLineBytes: 4 });
    live.feed({ attempt: 1, stream: "stdout" }, Buffer.from("abcdefghij\nxy\n"));
    expect(lines()).toEqual(["stdout:abcd", "stdout:efgh", "stdout:ij", "stdout:xy"]);
  });

  it("stops at maxLines or maxBytes with one event that says the output was cut", () => {
    const byLines = collect({ maxLines: 3 });
    byLines.live.feed({ attempt: 1, stream: "stdout" }, Buffer.from("a\nb\nc\nd\ne\n"));
    byLines.live.feed({ attempt: 2, stream: "stdout" }, Buffer.from("f\n"));
    byLines.live.flush({ attempt: 2 });
    expect(byLines.lines().slice(0, 3)).toEqual(["stdout:a", "stdout:b", "stdout:c"]);
    expect(byLines.events).toHaveLength(4);
    expect(byLines.events[3]).toMatchObject({ cut: true, line: expect.stringMatching(/^\[output cut: /) });

    const byBytes = collect({ maxBytes: 10 });
    byBytes.live.feed({ attempt: 1, sample: 2, stream: "stderr" }, Buffer.from("12345\n67890\nabc\n"));
    expect(byBytes.lines()).toEqual([
      "stderr:12345",
      "stderr:67890",
      expect.stringMatching(/^stderr:\[output cut: .* \(cut\)$/),
    ]);
    expect(byBytes.events[0]).toMatchObject({ sample: 2, attempt: 1, runId: "run_1" });
  });
});
