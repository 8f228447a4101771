import { describe, expect, test } from "vitest";
import { amplificationAttack } from "../support/amplification-attack.ts";
import { backends, echoTool, resultJson, runCase, suiteManager } from "../support/harness.ts";

// Issue 29, finding 9: argument amplification. 150 threads each send `[{}] * 262000` (1 MiB of
// text that parses into about 21 times as much); the host reckons what a request would build
// before parsing it, and a run's calls in flight share one budget of bytes.

describe.each(backends)("argument amplification (backend %s)", (backend) => {
  const manager = suiteManager(backend);

  test("finding 9: 150 threads sending [{}] * 262000 each get a clear refusal; the tool never receives one", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager(), {
      program: amplificationAttack(),
      tools: [tool],
      maxToolCalls: 200,
      execTimeout: 120,
    });
    const outcomes = resultJson<Record<string, number>>(run);
    expect(calls).toHaveLength(0);
    expect(Object.values(outcomes).reduce((sum, count) => sum + count, 0)).toBe(150);
    for (const key of Object.keys(outcomes)) {
      expect(key).toMatch(
        /^ToolError: the arguments hold 524\d+ JSON values, about 2\d\.\d MiB on the host once parsed, over its budget of 24\.0 MiB/,
      );
    }
    expect(run.toolCalls.every((call) => call.status === "limit")).toBe(true);
  }, 300_000);

  test("finding 9: calls in flight share one budget: 16 at once of about 8.6 MiB each once parsed are partly refused, and the rest answered", async () => {
    const { tool, calls } = echoTool({ delayMs: 1500 });
    const run = await runCase(manager(), {
      program: amplificationAttack({ copies: 90000, threads: 16 }),
      tools: [tool],
      maxToolCalls: 200,
      execTimeout: 120,
    });
    const outcomes = resultJson<Record<string, number>>(run);
    const busy = Object.entries(outcomes).filter(([key]) => /the host already holds about/.test(key));
    expect(outcomes.ok ?? 0).toBeGreaterThan(0);
    expect(busy.length).toBeGreaterThan(0);
    // At most two such calls fit in the budget at once; every one answered reached the tool.
    expect(calls).toHaveLength(outcomes.ok ?? 0);
  }, 300_000);
});
