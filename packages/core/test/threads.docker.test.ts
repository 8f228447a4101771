import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  type Agent,
  type BuildAgentOptions,
  buildAgent,
  createProgramRunner,
  ThreadError,
} from "../src/index.ts";
import { ScriptedChatModel } from "../src/testing/index.ts";
import { containersOfThisProcess, programReply, runFixtureProcess } from "./helpers.ts";

// Threads (codeAction.state "thread"): one live interpreter per configurable.thread_id, kept
// between invocations; restored in another process from a signed store; forked; bounded. Real
// containers; the model is scripted.

const threadProcess = fileURLToPath(new URL("./fixtures/thread-process.ts", import.meta.url));
const secret = "0123456789abcdef0123456789abcdef";
const folders: string[] = [];
afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

async function tempFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "codeaction-threads-"));
  folders.push(folder);
  return folder;
}

async function withThreads<T>(
  programs: string[],
  extra: Partial<BuildAgentOptions>,
  body: (agent: Agent, model: ScriptedChatModel) => Promise<T>,
): Promise<T> {
  const model = new ScriptedChatModel(programs.map((program) => programReply(program)));
  const agent = await buildAgent({
    model,
    pattern: "code-action",
    ...extra,
    codeAction: { state: "thread", maxRepairs: 0, ...extra.codeAction },
  });
  try {
    return await body(agent, model);
  } finally {
    await agent.close();
  }
}

/**
 * The containers this test started: this process's, less those that were there before it (an
 * earlier test file in the same worker may still be removing its own).
 */
function containersSince(): () => number {
  const before = new Set(containersOfThisProcess());
  return () => containersOfThisProcess().filter((id) => !before.has(id)).length;
}

const on = (agent: Agent, threadId: string) =>
  agent.invoke({ messages: [{ role: "user", content: "next" }] }, { configurable: { thread_id: threadId } });

type ProcessReport = {
  answers: string[];
  threads: Array<{ id: string; restored?: { programs: number }; startedAfresh?: string }>;
  calls: number;
  modelCalls: number;
  error?: { code?: string; reason?: string; message: string };
};

/** One process of thread-process.ts: its JSON line. */
function runProcess(store: string, threadId: string, programs: string[]): Promise<ProcessReport> {
  return runFixtureProcess(threadProcess, [store, secret, threadId, ...programs]);
}

describe("threads: state kept between questions (real containers)", () => {
  it("question 2 on thread A reads what question 1 set; thread B cannot; A and B at once do not interfere", async () => {
    await withThreads(
      [
        "secret_a = 'alpha'\nprint('RESULT: set')",
        "print('RESULT:', secret_a)",
        "print('RESULT:', 'secret_a' in globals())",
        // A and B at the same time, each writing and reading its own value many times.
        "import time\nfor i in range(20):\n    shared = 'A'\n    time.sleep(0.02)\n    assert shared == 'A'\nprint('RESULT:', shared, secret_a)",
        "import time\nfor i in range(20):\n    shared = 'B'\n    time.sleep(0.02)\n    assert shared == 'B'\nprint('RESULT:', shared)",
      ],
      {},
      async (agent, model) => {
        expect((await on(agent, "A")).answer).toBe("set");
        expect((await on(agent, "A")).answer).toBe("alpha");
        // The second question's prompt says what the interpreter holds.
        expect(String(model.calls[1]!.messages[1]!.content)).toContain("secret_a: str len 5");
        expect((await on(agent, "B")).answer).toBe("False");
        const [a, b] = await Promise.all([on(agent, "A"), on(agent, "B")]);
        expect(a.answer).toBe("A alpha");
        expect(b.answer).toBe("B");
      },
    );
  });

  it("with maxSteps 1 a thread's program without a RESULT line is repaired, not a step", async () => {
    await withThreads(
      ["x = 1\nprint('no result')", "print('RESULT:', x)"],
      { codeAction: { maxRepairs: 1 } },
      async (agent) => {
        const result = await on(agent, "R");
        expect(result.answer).toBe("1");
        expect(result.attempts.map((attempt) => attempt.status)).toEqual(["no-result", "ok"]);
      },
    );
  });

  it("the escalation model's program runs in the thread's interpreter, after the failed repairs", async () => {
    const escalation = new ScriptedChatModel([programReply("print('RESULT:', total * 2, failed_step)")]);
    await withThreads(
      ["total = 21\nprint('RESULT: kept')", "failed_step = 'seen'\nraise ValueError('the main model fails')"],
      { codeAction: { escalate: { model: escalation } } },
      async (agent) => {
        expect((await on(agent, "E")).answer).toBe("kept");
        const result = await on(agent, "E");
        expect(result.answer).toBe("42 seen");
        expect(result.attempts.map((attempt) => [attempt.status, attempt.escalated ?? false])).toEqual([
          ["error", false],
          ["ok", true],
        ]);
      },
    );
  });

  it("an invocation without thread_id is refused with the fix", async () => {
    await withThreads([], {}, async (agent) => {
      const error = await agent
        .invoke({ messages: [{ role: "user", content: "x" }] })
        .catch((caught: unknown) => caught);
      expect(ThreadError.isInstance(error)).toBe(true);
      expect((error as ThreadError).reason).toBe("no-thread-id");
      expect((error as Error).message).toContain("configurable: { thread_id");
    });
  });

  it("fork: U starts from T's state; a change in U leaves T as it was", async () => {
    await withThreads(
      ["value = 1\nprint('RESULT: ok')", "value = 2\nprint('RESULT:', value)", "print('RESULT:', value)"],
      {},
      async (agent) => {
        await on(agent, "T");
        await agent.forkThread("T", "U");
        expect((await on(agent, "U")).answer).toBe("2");
        expect((await on(agent, "T")).answer).toBe("1");
      },
    );
  });

  it("a thread cannot see another thread's files, variables or interpreter", async () => {
    // A thread's relay and interpreter both carry the bootstrap's text on their command line: B
    // must count exactly its own two, and none of A's files.
    const census =
      "import os\nmine = 0\nfor p in filter(str.isdigit, os.listdir('/proc')):\n    try:\n        mine += b'codeaction bootstrap' in open(f'/proc/{p}/cmdline', 'rb').read()\n    except (OSError, ValueError):\n        pass\n";
    await withThreads(
      [
        "open('/workspace/a-marker.txt', 'w').write('a')\nopen('/tmp/a-marker.txt', 'w').write('a')\na_value = 1\nprint('RESULT: planted')",
        `${census}print('RESULT:', mine, os.path.exists('/workspace/a-marker.txt'), os.path.exists('/tmp/a-marker.txt'), 'a_value' in globals())`,
        `${census}print('RESULT:', mine, os.path.exists('/workspace/a-marker.txt'), 'a_value' in globals())`,
      ],
      {},
      async (agent) => {
        await on(agent, "A");
        expect((await on(agent, "B")).answer).toBe("2 False False False");
        expect((await on(agent, "A")).answer).toBe("2 True True");
      },
    );
  });

  it("bounded: past maxThreads the least recently used thread's container goes, big objects and background threads with it", async () => {
    const big =
      "import threading, time\nblob = bytearray(64 * 1024 * 1024)\nthreading.Thread(target=lambda: [time.sleep(0.1) for _ in iter(int, 1)], daemon=True).start()\nprint('RESULT: held')";
    await withThreads(
      [big, big, big, "print('RESULT:', 'blob' in globals())"],
      { sandbox: { pool: 0 }, codeAction: { maxThreads: 2 } },
      async (agent, model) => {
        const containers = containersSince();
        await on(agent, "one");
        await on(agent, "two");
        expect(containers()).toBe(2);
        await on(agent, "three");
        // "one" was evicted: its container (and the background thread in it) is gone.
        await expect.poll(containers, { timeout: 20_000 }).toBe(2);
        // Without a store, "one" starts afresh on its next question: the model and the result are told.
        const again = await on(agent, "one");
        expect(again.answer).toBe("False");
        expect(again.thread?.startedAfresh).toContain("evicted (maxThreads)");
        expect(String(model.calls.at(-1)!.messages[1]!.content)).toContain("could not be restored");
      },
    );
  });

  it("threads count against maxTotalMemory: with room for two containers, a third thread evicts instead of waiting", async () => {
    await withThreads(
      ["a = 1\nprint('RESULT: one')", "b = 2\nprint('RESULT: two')", "c = 3\nprint('RESULT: three')"],
      { sandbox: { pool: 0, memoryLimit: "256m", maxTotalMemory: "512m" }, codeAction: { maxThreads: 8 } },
      async (agent) => {
        const containers = containersSince();
        expect((await on(agent, "one")).answer).toBe("one");
        expect((await on(agent, "two")).answer).toBe("two");
        expect((await on(agent, "three")).answer).toBe("three");
        await expect.poll(containers, { timeout: 20_000 }).toBeLessThanOrEqual(2);
      },
    );
  }, 60_000);

  it("idle: a thread's container stops after idleSeconds, whatever its program left running", async () => {
    await withThreads(
      [
        "import threading, time\nthreading.Thread(target=lambda: [time.sleep(0.1) for _ in iter(int, 1)]).start()\nprint('RESULT: running')",
      ],
      { sandbox: { pool: 0 }, codeAction: { idleSeconds: 1 } },
      async (agent) => {
        const containers = containersSince();
        await on(agent, "idle");
        expect(containers()).toBe(1);
        await expect.poll(containers, { timeout: 20_000 }).toBe(0);
      },
    );
  });
});

describe("a program runner's threads (what codeaction mcp's run_program { thread } uses)", () => {
  it("keeps a thread's variables between runs, says when it starts afresh, and stops the least recently used", async () => {
    const runner = await createProgramRunner({ tools: [], threads: { maxThreads: 1 } });
    try {
      const first = await runner.run("x = 41\nprint('RESULT: set')", { thread: "c1" });
      expect(first).toMatchObject({ status: "ok", thread: { id: "c1", fresh: true } });
      const second = await runner.run("print('RESULT:', x + 1)", { thread: "c1" });
      expect(second).toMatchObject({ result: "42", thread: { id: "c1", fresh: false } });
      // Without a thread, a fresh container as always: x is not there.
      expect((await runner.run("print('RESULT:', 'x' in globals())")).result).toBe("False");
      // A second thread past maxThreads: c1's interpreter is stopped; it starts afresh.
      await runner.run("print('RESULT: c2')", { thread: "c2" });
      const again = await runner.run("print('RESULT:', 'x' in globals())", { thread: "c1" });
      expect(again).toMatchObject({ result: "False", thread: { id: "c1", fresh: true } });
    } finally {
      await runner.close();
    }
  });
});

describe("threads restored in another process (signed file store)", () => {
  it("process 2 answers from what process 1 computed, calling no tool; a store changed by one byte is refused", async () => {
    const store = await tempFolder();
    const first = await runProcess(store, "T", [
      "nums = load_numbers()\ntotal = sum(nums)\nprint('RESULT:', total)",
      "doubled = total * 2\nprint('RESULT:', doubled)",
    ]);
    expect(first, JSON.stringify(first)).toMatchObject({ answers: ["12", "24"], calls: 1 });
    const second = await runProcess(store, "T", ["print('RESULT:', total + doubled)"]);
    expect(second, JSON.stringify(second)).toMatchObject({ answers: ["36"], calls: 0 });
    // The result says how the thread came back: its two programs re-executed.
    expect(second.threads[0]).toMatchObject({ id: "T", restored: { programs: 2 } });

    const [file] = (await readdir(store)).filter((name) => name.endsWith(".thread.json"));
    const path = join(store, file!);
    const text = await readFile(path, "utf8");
    // One byte: the stored result of load_numbers, [3,4,5] -> [3,4,6].
    const changed = text.replace("[3,4,5]", "[3,4,6]");
    expect(changed).not.toBe(text);
    await writeFile(path, changed);
    const third = await runProcess(store, "T", ["print('RESULT:', total)"]);
    expect(third.error).toMatchObject({ code: "thread", reason: "history-refused" });
    expect(third.modelCalls).toBe(0);
    expect(third.calls).toBe(0);
  });
});
