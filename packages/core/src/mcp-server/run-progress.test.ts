import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { maxOutputNotificationBytes, outputMetaKey, reportRunProgress } from "./run-progress.ts";

describe("a run's progress notifications", () => {
  it("count in the reply's budget: past it one notification says the live output stops", async () => {
    const sent: ServerNotification[] = [];
    const progress = reportRunProgress({
      progressToken: "t",
      execTimeout: 60,
      intervalMs: 60_000,
      send: async (notification) => {
        sent.push(notification);
      },
    });
    // What the runner lets through (2000 lines, 256 KiB of them), of control bytes JSON escapes six-fold.
    const line = "\u0001".repeat(128);
    for (let index = 0; index < 2000; index += 1) {
      progress.output({ type: "program-output", runId: "r", attempt: 1, stream: "stdout", line });
    }
    await progress.stop();
    const bytes = sent.reduce((total, notification) => total + JSON.stringify(notification).length, 0);
    // Within the budget, plus the one notification that says so.
    expect(bytes).toBeLessThanOrEqual(maxOutputNotificationBytes + 1024);
    const last = sent.at(-1)?.params as { message: string; _meta: Record<string, { cut?: boolean }> };
    expect(last.message).toMatch(/^\[live output cut: .* the rest of the output comes in the result\]$/);
    expect(last._meta[outputMetaKey]?.cut).toBe(true);
    // And the lines before the cut went out whole, in order.
    expect(sent.length).toBeGreaterThan(50);
  });
});
