import type { SandboxSession } from "@codeaction/sandbox";
import { describe, expect, test } from "vitest";
import { runLocally } from "../../test/local-relay.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import type { AgentEvent } from "../types.ts";
import { findResult, runProgram } from "./run-program.ts";

// Status rules through the real relay (this machine's python3, bridge folder in a temp dir).

const tools: ToolSpec[] = [
  {
    name: "get-user",
    description: "A user by id.",
    origin: "tool",
    inputSchema: {
      type: "object",
      properties: { id: { type: "integer" }, verbose: { type: "boolean" } },
      required: ["id"],
    },
    invoke: async (args) => ({ id: args.id, verbose: args.verbose ?? "omitted" }),
  },
  {
    name: "from",
    description: "A Python keyword as a tool name.",
    origin: "tool",
    inputSchema: { type: "object", properties: {} },
    invoke: async () => "keyword ok",
  },
];
const stubsSource = renderStubsModule(tools);

describe("status", () => {
  test("exit 0 with a RESULT line is ok; the last RESULT line wins", async () => {
    const run = await runLocally({
      program: 'print("RESULT: 1")\nprint("RESULT:  two ")',
      stubsSource,
      tools,
    });
    expect(run).toMatchObject({ status: "ok", exitCode: 0, result: " two ", truncated: false });
  });

  test("exit 0 without a RESULT line is no-result", async () => {
    const run = await runLocally({ program: 'print("done")', stubsSource, tools });
    expect(run.status).toBe("no-result");
    expect(run.result).toBeUndefined();
  });

  test("a non-zero exit is an error; tracebacks carry the program's own line numbers", async () => {
    const run = await runLocally({ program: "x = 1\n\nraise ValueError('bad value')\n", stubsSource, tools });
    expect(run).toMatchObject({ status: "error", exitCode: 1 });
    expect(run.stderr).toMatch(/program\.py", line 3, in <module>/);
    expect(run.stderr).not.toContain('File "<string>"');
    expect(run.stderr).toContain("ValueError: bad value");
    const exited = await runLocally({
      program: "import sys\nprint('RESULT: x')\nsys.exit(3)",
      stubsSource,
      tools,
    });
    expect(exited).toMatchObject({ status: "error", exitCode: 3, result: "x" });
  });

  test("killed by SIGKILL that the host did not send is read as out of memory (137)", async () => {
    const run = await runLocally({
      program: "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
      stubsSource,
      tools,
    });
    expect(run).toMatchObject({ status: "oom", exitCode: 137 });
  });

  test("exit code 137 without a signal is an ordinary error, not out of memory", async () => {
    const run = await runLocally({ program: "import sys\nsys.exit(137)", stubsSource, tools });
    expect(run).toMatchObject({ status: "error", exitCode: 137 });
  });

  test("an aborted signal ends the run as aborted, with the program killed", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const run = await runLocally({
      program: "import time\ntime.sleep(60)",
      stubsSource,
      tools,
      signal: controller.signal,
    });
    expect(run.status).toBe("aborted");
    expect(run.exitCode).not.toBe(0);
  });

  test("a session whose spawn throws gives an infrastructure run", async () => {
    const session = {
      spawn: () => {
        throw new Error("This sandbox session was destroyed");
      },
    } as unknown as SandboxSession;
    const run = await runProgram({
      session,
      program: "print(1)",
      stubsSource,
      tools,
      runId: "r",
      execTimeout: 5,
      maxToolCalls: 5,
    });
    expect(run.status).toBe("infrastructure");
    expect(run.infrastructureError).toContain("session was destroyed");
  });
});

describe("stubs", () => {
  test("work without an import and with one; odd tool names map back to the original", async () => {
    const events: AgentEvent[] = [];
    const run = await runLocally({
      program: `
plain = get_user(id=1)
from codeaction_tools import *
imported = get_user(id=2, verbose=True)
print("RESULT:", plain, imported, from_())
`,
      stubsSource,
      tools,
      onEvent: (event) => events.push(event),
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("{'id': 1, 'verbose': 'omitted'} {'id': 2, 'verbose': True} keyword ok");
    expect(run.toolCalls.map((call) => [call.tool, call.args])).toEqual([
      ["get-user", { id: 1 }],
      ["get-user", { id: 2, verbose: true }],
      ["from", {}],
    ]);
    expect(events.map((event) => event.type)).toEqual([
      "tool-call",
      "tool-result",
      "tool-call",
      "tool-result",
      "tool-call",
      "tool-result",
    ]);
  });
});

describe("findResult", () => {
  test("reads the last RESULT line of stdout", () => {
    expect(findResult("RESULT: 1\nnoise\nRESULT: 2\r\n")).toBe("2");
    expect(findResult("RESULT:3")).toBe("3");
    expect(findResult('RESULT: {"a": 1}\n')).toBe('{"a": 1}');
    expect(findResult(" RESULT: indented\nresult: lower")).toBeUndefined();
    expect(findResult("the RESULT: no\r\nRESULT: 42\r\n")).toBe("42");
    expect(findResult("nothing here")).toBeUndefined();
  });

  test("keeps the answer as printed: one space after the colon dropped, an empty answer kept", () => {
    expect(findResult("RESULT:  two \n")).toBe(" two ");
    expect(findResult("RESULT:\n")).toBe("");
  });

  test("ignores a line the output cap cut short", () => {
    expect(findResult("RESULT: 1\nRESULT: 12\n[... cut here: 500 bytes of stdout omitted ...]\ntail")).toBe(
      "1",
    );
  });
});

describe("the relay's count of /workspace/out (a hint: at 0 the host does not read the folder)", () => {
  const count = async (program: string) =>
    (await runLocally({ program: `import os\n${program}\nprint("RESULT: 1")`, stubsSource, tools }))
      .outputEntries;

  test("absent or empty is 0; it counts up to 2", async () => {
    expect(await count("")).toBe(0);
    expect(await count('os.mkdir("out")')).toBe(0);
    expect(await count('os.mkdir("out")\nopen("out/a.txt", "w").write("a")')).toBe(1);
    expect(await count('os.mkdir("out")\nfor name in "abcde": open(f"out/{name}", "w").write(name)')).toBe(2);
  });

  test("a link, a file or a FIFO in its place gives no count, so the host reads it and refuses it", async () => {
    expect(await count('os.mkdir("elsewhere")\nos.symlink("elsewhere", "out")')).toBeUndefined();
    expect(await count('open("out", "w").write("not a folder")')).toBeUndefined();
    expect(await count('os.mkfifo("out")')).toBeUndefined();
  });
});
