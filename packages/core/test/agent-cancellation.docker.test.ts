import { tool } from "@langchain/core/tools";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { AbortError, buildAgent, createCodeActionSandbox } from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { containersOfThisProcess, programReply } from "./helpers.ts";
import { RunRecorder } from "./run-recorder.ts";

/** A tool that runs until its signal aborts; `state` says whether it is still running. */
function waitingTool() {
  const state = { started: 0, running: 0, sawAbort: false };
  const waiter = tool(
    async (_input: Record<string, never>, config) => {
      state.started += 1;
      state.running += 1;
      try {
        await new Promise<void>((_, reject) =>
          config?.signal?.addEventListener("abort", () => reject(new Error("tool cancelled")), {
            once: true,
          }),
        );
      } finally {
        state.sawAbort = config?.signal?.aborted === true;
        state.running -= 1;
      }
      return "never";
    },
    { name: "wait_forever", description: "Waits.", schema: z.object({}) },
  );
  return { tool: waiter, state };
}

const sleeper = programReply('import time\ntime.sleep(600)\nprint("RESULT: late")');
const secondTurn = programReply('print("RESULT: 2")');

describe("cancelling a code-action turn against the real engine", () => {
  test("the turn is one chain run: attempts (a repair tagged) are its children, each with its model call and tool runs", async () => {
    const model = new ScriptedChatModel([
      programReply("raise SystemExit(3)"),
      programReply('from codeaction_tools import add\nprint("RESULT:", add(a=2, b=3))'),
    ]);
    const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
      name: "add",
      description: "Add.",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [add],
    });
    const recorder = new RunRecorder();
    const result = await agent.invoke("2 + 3?", { callbacks: [recorder], runName: "analyst" });
    expect(result.answer).toBe("5");
    const root = recorder.root();
    expect(root).toMatchObject({ kind: "chain", name: "analyst", ended: true });
    const attempts = recorder.children(root);
    expect(attempts.map((run) => [run.name, run.tags.includes("repair")])).toEqual([
      ["attempt 1", false],
      ["attempt 2", true],
    ]);
    expect(attempts[0]?.output).toMatchObject({ status: "error", exitCode: 3 });
    expect(recorder.children(attempts[0]).map((run) => run.kind)).toEqual(["llm"]);
    const secondChildren = recorder.children(attempts[1]);
    expect(secondChildren.map((run) => run.kind)).toEqual(["llm", "tool"]);
    expect(secondChildren[1]?.name).toBe("add");
    expect(secondChildren[1]).toMatchObject({ ended: true, output: expect.anything() });
  });

  test("abort while the program runs: AbortError with the attempt, container removed; the next turn works", async () => {
    // The program prints a marker and says so through a tool, then sleeps: the abort comes once that
    // tool's result is back (the program runs), not after a guessed time.
    const asleep = tool(async () => "ok", {
      name: "falling_asleep",
      description: "Says the program is about to sleep.",
      schema: z.object({}),
    });
    const model = new ScriptedChatModel([
      programReply(
        'import time\nfrom codeaction_tools import falling_asleep\nprint("marker: running", flush=True)\nfalling_asleep()\ntime.sleep(600)\nprint("RESULT: late")',
      ),
      secondTurn,
    ]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [asleep],
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const events = await agent.stream("sleep", { signal: controller.signal });
    const error = await (async () => {
      for await (const event of events) {
        // The program's own lines (program-output) may come before or after the tool's events.
        if (event.type !== "program-output") seen.push(event.type);
        if (event.type === "tool-result") controller.abort(new Error("client disconnected"));
      }
    })().catch((thrown: unknown) => thrown);
    expect(seen).toEqual([
      "model-start",
      "model-end",
      "program-start",
      "tool-call",
      "tool-result",
      "program-end",
    ]);
    expect(AbortError.isInstance(error)).toBe(true);
    expect((error as AbortError).attempts.map((attempt) => attempt.status)).toEqual(["aborted"]);
    expect((error as AbortError).attempts[0]?.stdout).toContain("marker: running");
    expect(containersOfThisProcess()).toEqual([]);
    expect((await agent.invoke("1 + 1?")).answer).toBe("2");
  });

  test("abort while a bridged tool call runs: the tool gets the signal and has stopped, no container is left", async () => {
    const waiting = waitingTool();
    const model = new ScriptedChatModel([
      programReply('from codeaction_tools import wait_forever\nprint("RESULT:", wait_forever())'),
    ]);
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [waiting.tool],
    });
    const controller = new AbortController();
    const events = await agent.stream("wait", { signal: controller.signal });
    const error = await (async () => {
      for await (const event of events) if (event.type === "tool-call") controller.abort();
    })().catch((thrown: unknown) => thrown);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(waiting.state).toMatchObject({ started: 1, running: 0, sawAbort: true });
    expect(containersOfThisProcess()).toEqual([]);
  });

  test("abort during an approval wait and while the container starts; break out of stream() too", async () => {
    let approvalSignal: AbortSignal | undefined;
    const model = new ScriptedChatModel([
      programReply('from codeaction_tools import add\nprint("RESULT:", add(a=1, b=1))'),
      sleeper,
      sleeper,
    ]);
    const add = tool(async ({ a, b }: { a: number; b: number }) => a + b, {
      name: "add",
      description: "Add.",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    await using agent = await buildAgent({
      model,
      pattern: "code-action",
      sandbox: { pool: 0 },
      extraTools: [add],
      approval: ({ signal }) => {
        approvalSignal = signal;
        return new Promise<boolean>(() => undefined);
      },
    });
    const approvalAbort = new AbortController();
    const waiting = (async () => {
      for await (const event of await agent.stream("1 + 1?", { signal: approvalAbort.signal }))
        if (event.type === "tool-call") setTimeout(() => approvalAbort.abort(), 200);
    })();
    await expect(waiting).rejects.toSatisfy(AbortError.isInstance);
    expect(approvalSignal?.aborted).toBe(true);
    expect(containersOfThisProcess()).toEqual([]);

    // program-start comes right before the container is asked for.
    const startAbort = new AbortController();
    const starting = (async () => {
      for await (const event of await agent.stream("sleep", { signal: startAbort.signal }))
        if (event.type === "program-start") startAbort.abort();
    })();
    await expect(starting).rejects.toSatisfy(AbortError.isInstance);
    expect(containersOfThisProcess()).toEqual([]);

    // Leaving the loop cancels the turn: when the loop's exit completes, the container is gone.
    for await (const event of await agent.stream("sleep")) if (event.type === "program-start") break;
    expect(containersOfThisProcess()).toEqual([]);
  });

  test("abort while waiting for a pool slot: the waiting turn leaves the line at once, the turn holding the slot goes on", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const hold = tool(
      async () => {
        holding = true;
        await held;
        return "released";
      },
      { name: "hold", description: "Waits until released.", schema: z.object({}) },
    );
    // One live container at most: the second turn must wait in line for the first one's slot.
    const sandbox = createCodeActionSandbox({ pool: 0, maxConcurrent: 1 });
    try {
      const model = new ScriptedChatModel([
        programReply('from codeaction_tools import hold\nprint("RESULT:", hold())'),
        sleeper,
      ]);
      await using agent = await buildAgent({ model, pattern: "code-action", sandbox, extraTools: [hold] });
      const first = agent.invoke("hold the slot");
      await waitUntil("the first turn's program holds the only slot", () => holding);
      const controller = new AbortController();
      const second = agent.invoke("wait for a slot", { signal: controller.signal });
      await waitUntil("the second turn waiting in line", () => sandbox.poolStatus().waiting === 1);
      controller.abort(new Error("client disconnected"));
      const error = await second.catch((thrown: unknown) => thrown);
      expect(AbortError.isInstance(error)).toBe(true);
      expect(sandbox.poolStatus()).toMatchObject({ waiting: 0, live: 1 });
      release();
      expect((await first).answer).toBe("released");
    } finally {
      release();
      await sandbox.cleanupAll();
    }
    expect(containersOfThisProcess()).toEqual([]);
  });
});

/** Polls `check` every 50 ms; fails naming `what` after 90 s (a loaded machine is slow, never wrong). */
async function waitUntil(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
