import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { echoTool, isRunning, startLocalRelay } from "../../test/local-relay.ts";
import { runProgramOver } from "../program/run-program.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";

// A kept interpreter (the start frame's "keep"): several programs over one relay and one
// interpreter, each a step with its own output, exit and calls; the relay run locally (protocol only).

const directories: string[] = [];
afterEach(async () => {
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

const echo = echoTool().tool;

async function keptRelay() {
  const directory = await mkdtemp(join(tmpdir(), "codeaction-steps-"));
  directories.push(directory);
  const process = startLocalRelay();
  const step = (program: string, extra: { execTimeout?: number } = {}) =>
    runProgramOver({
      process,
      program,
      stubsSource: renderStubsModule([echo]),
      tools: [echo],
      runId: "run-steps",
      execTimeout: extra.execTimeout ?? 15,
      maxToolCalls: 5,
      bridgeDirectory: join(directory, ".codeaction"),
      workDirectory: directory,
      killStragglers: false,
      keep: true,
    });
  return { process, step };
}

describe("a kept interpreter runs several programs in one __main__", () => {
  it("keeps variables, imports and functions from step to step, each step its own output", async () => {
    const { process, step } = await keptRelay();
    const first = await step(
      "import json\nrows = [1, 2, 3]\ndef double(x):\n    return 2 * x\nprint('loaded', len(rows))",
    );
    expect(first).toMatchObject({ status: "no-result", exitCode: 0, living: true, stdout: "loaded 3\n" });
    expect(first.summary).toContain("rows: list len 3");
    expect(first.summary).toContain("double: function double(x)");
    expect(first.summary).toContain("json: module json");
    const second = await step("total = sum(double(r) for r in rows)\nprint(json.dumps({'total': total}))");
    expect(second).toMatchObject({ status: "no-result", living: true, stdout: '{"total": 12}\n' });
    const third = await step("print(f'RESULT: {total}')");
    expect(third).toMatchObject({ status: "ok", result: "12", living: true });
    process.stdin.end();
    expect((await process.exit).exitCode).toBe(0);
  });

  it("a file a step left open for writing is on disk whole when the step ends", async () => {
    const { process, step } = await keptRelay();
    const folder = await mkdtemp(join(tmpdir(), "codeaction-steps-files-"));
    directories.push(folder);
    const path = join(folder, "left-open.txt");
    const first = await step(`log = open(${JSON.stringify(path)}, "w")\nlog.write("written in step one")`);
    expect(first).toMatchObject({ exitCode: 0, living: true });
    // The next step, or the host collecting /workspace/out, reads what the step wrote.
    expect(await readFile(path, "utf8")).toBe("written in step one");
    const second = await step('log.write(", and two")\nprint("RESULT: ok")');
    expect(second).toMatchObject({ status: "ok", living: true });
    expect(await readFile(path, "utf8")).toBe("written in step one, and two");
    process.stdin.end();
    expect((await process.exit).exitCode).toBe(0);
  });

  it("a failed step keeps what it set before the error, and the interpreter lives", async () => {
    const { process, step } = await keptRelay();
    const failed = await step("partial = 41\nraise ValueError('boom')");
    expect(failed).toMatchObject({ status: "error", exitCode: 1, living: true });
    expect(failed.stderr).toContain("ValueError: boom");
    expect(failed.stderr).not.toContain("<string>");
    const exited = await step("import sys\nsys.exit(3)");
    expect(exited).toMatchObject({ status: "error", exitCode: 3, living: true });
    const next = await step("print('RESULT:', partial + 1)");
    expect(next).toMatchObject({ status: "ok", result: "42" });
    process.stdin.end();
  });

  it("tool calls work in every step, and each step counts its own", async () => {
    const { process, step } = await keptRelay();
    const first = await step("a = echo(value='one')\nprint(a)");
    expect(first.toolCalls.map((call) => call.args)).toEqual([{ value: "one" }]);
    const second = await step("b = echo(value='two')\nprint('RESULT:', a['echoed'], b['echoed'])");
    expect(second).toMatchObject({ status: "ok", result: "one two" });
    expect(second.toolCalls.map((call) => call.args)).toEqual([{ value: "two" }]);
    process.stdin.end();
  });

  it("a step that times out ends the interpreter: no living exit, the relay gone", async () => {
    const { process, step } = await keptRelay();
    await step("x = 1\nprint('ok')");
    const stuck = await step("import time\ntime.sleep(30)", { execTimeout: 1 });
    expect(stuck.status).toBe("timeout");
    expect(stuck.living).toBeUndefined();
    await process.exit;
    expect(isRunning(process.pid!)).toBe(false);
  });

  it("a program that ends its own interpreter (os._exit) reports a final exit", async () => {
    const { process, step } = await keptRelay();
    const ended = await step("import os\nprint('bye', flush=True)\nos._exit(5)");
    expect(ended).toMatchObject({ exitCode: 5, status: "error", stdout: "bye\n" });
    expect(ended.living).toBeUndefined();
    await process.exit;
  });

  it("a forged step end (a line the program writes itself on fd 5) only ends its own step", async () => {
    const { process, step } = await keptRelay();
    const forged = await step("import os\nos.write(5, b'not json\\n')\nprint('after')");
    // fd 5 was moved off by the bootstrap: the program's write fails like on any closed descriptor.
    expect(forged.status).toBe("error");
    expect(forged.stderr).toContain("OSError");
    const next = await step("print('RESULT: still here')");
    expect(next).toMatchObject({ status: "ok", result: "still here" });
    process.stdin.end();
  });

  it("between two steps the relay sends nothing, even while a background thread of the program prints", async () => {
    const { process, step } = await keptRelay();
    await step(
      "import threading, time\ndef chatter():\n    while True:\n        print('tick', flush=True)\n        time.sleep(0.01)\nthreading.Thread(target=chatter, daemon=True).start()\nprint('started')",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The host's end of the relay's stdout waits paused between steps: nothing arrived in it.
    expect((process.stdout as NodeJS.ReadStream).readableLength).toBe(0);
    const next = await step("print('RESULT: done')");
    expect(next).toMatchObject({ status: "ok", result: "done" });
    // What the thread printed meanwhile waited in the pipe and counts as the next step's output.
    expect(next.stdout).toContain("tick");
    process.stdin.end();
  });

  it("a program that floods its interpreter's step pipe only ends its own step; the next one runs", async () => {
    const { process, step } = await keptRelay();
    const flood = await step(
      "import os\nfor fd in range(5, 64):\n    try:\n        os.write(fd, b'x' * 70000)\n    except OSError:\n        pass\nimport time\ntime.sleep(0.5)\nprint('still running')",
    );
    expect(flood.status, JSON.stringify(flood)).toBe("error");
    expect(flood.living).toBe(true);
    const next = await step("print('RESULT: ok')");
    expect(next, JSON.stringify({ flood, next })).toMatchObject({ status: "ok", result: "ok" });
    process.stdin.end();
  });
});
