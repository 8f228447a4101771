import { tool } from "@langchain/core/tools";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { type AgentEvent, buildAgent } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { programReply } from "./helpers.ts";

// program-output events against the real engine: lines arrive while the program runs, and a
// program that prints 1 GiB costs the host a bounded number of events and bounded memory.

type OutputEvent = Extract<AgentEvent, { type: "program-output" }>;

describe("live program output (real engine)", () => {
  test("the first line is seen while the program still runs: it waits for the host to have seen it", async () => {
    // The handshake: the program prints, then calls a tool that answers only once the stream has
    // delivered that line (or, failing that, after 30 s, answering "not seen").
    let seen: () => void = () => undefined;
    const firstLineSeen = new Promise<string>((resolve) => {
      seen = () => resolve("seen");
    });
    const waitForHost = tool(
      async () =>
        Promise.race([firstLineSeen, new Promise((resolve) => setTimeout(resolve, 30_000, "not seen"))]),
      { name: "wait_for_host", description: "Waits.", schema: z.object({}) },
    );
    const model = new ScriptedChatModel([
      programReply(
        'from codeaction_tools import wait_for_host\nprint("first line")\nanswer = wait_for_host()\nprint("second line")\nprint("RESULT:", answer)',
      ),
    ]);
    await using agent = await buildAgent({ model, pattern: "code-action", extraTools: [waitForHost] });
    const order: string[] = [];
    let answer: string | undefined;
    for await (const event of await agent.stream("go")) {
      if (event.type === "program-output") {
        order.push(event.line);
        if (event.line === "first line") seen();
      }
      if (event.type === "tool-result") order.push(`tool-result ${JSON.stringify(event.result)}`);
      if (event.type === "answer") answer = event.result.answer;
    }
    expect(answer).toBe("seen");
    expect(order).toEqual(["first line", 'tool-result "seen"', "second line", "RESULT: seen"]);
  });

  test("a program printing 1 GiB: a bounded number of events, one cut marker, host memory bounded", async () => {
    const model = new ScriptedChatModel([
      programReply(
        'import sys\nline = "x" * 1023 + "\\n"\nblock = line * 1024\nfor _ in range(1024):\n    sys.stdout.write(block)\nprint("RESULT: done")',
      ),
    ]);
    await using agent = await buildAgent({ model, pattern: "code-action", codeAction: { execTimeout: 300 } });
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    const output: OutputEvent[] = [];
    let stdoutLength = 0;
    try {
      for await (const event of await agent.stream("print a lot")) {
        if (event.type === "program-output") output.push(event);
        if (event.type === "answer") stdoutLength = event.result.attempts[0]?.stdout.length ?? 0;
      }
    } finally {
      clearInterval(sampler);
    }
    const cut = output.filter((event) => event.cut);
    expect(cut).toHaveLength(1);
    expect(output.at(-1)).toBe(cut[0]);
    expect(output.length).toBeLessThanOrEqual(2001);
    expect(output.slice(0, -1).reduce((bytes, event) => bytes + event.line.length, 0)).toBeLessThanOrEqual(
      256 * 1024,
    );
    // The result keeps its own capped output (head and tail), not the GiB.
    expect(stdoutLength).toBeLessThan(4 * 1024 * 1024);
    // A generous bound: holding the output would take over 1 GiB.
    expect(peak - baseline).toBeLessThan(300 * 1024 * 1024);
  });
});
