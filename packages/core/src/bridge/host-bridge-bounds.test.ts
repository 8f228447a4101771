import { describe, expect, test, vi } from "vitest";
import { countedItems, echoTool, runLocally } from "../../test/local-relay.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { previewCharacters } from "./bounded-value.ts";

// What the host keeps for a run stays bounded whatever the program sends: records keep previews and
// sizes, refused calls keep only their size and reason, a flood of the bridge ends the run, and the
// relay never has more than a few requests waiting for the host. (Real relay, local python3.)

/** A tool that answers after `delayMs` and counts how many of its calls run at once. */
function slowTool(delayMs: number) {
  const state = { running: 0, most: 0, calls: 0 };
  const tool: ToolSpec = {
    name: "slow",
    description: "Answers after a while.",
    origin: "tool",
    inputSchema: { type: "object", properties: { value: {} } },
    invoke: async (args) => {
      state.calls += 1;
      state.running += 1;
      state.most = Math.max(state.most, state.running);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      state.running -= 1;
      return { echoed: args.value ?? null };
    },
  };
  return { tool, state };
}

describe("what the host keeps of a run", () => {
  test("1 MiB arguments and results are recorded as previews and sizes; refused calls keep no arguments", async () => {
    const { tool } = echoTool();
    const big: ToolSpec = {
      name: "big",
      description: "Returns a value larger than the bridge's answer limit.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: async () => "y".repeat(17 * 1024 * 1024),
    };
    const run = await runLocally({
      program: `
import json
from codeaction_tools import _call
errors = []
for index in range(4):
    echo(value="x" * (1024 * 1024 - 100))
    try:
        _call("nope", {"value": "z" * (1024 * 1024 - 100)})
    except ToolError as error:
        errors.append(str(error)[:40])
try:
    big()
except ToolError as error:
    errors.append(str(error))
print("RESULT:", json.dumps(errors[-1]))
`,
      stubsSource: renderStubsModule([tool, big]),
      tools: [tool, big],
      execTimeout: 60,
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toMatch(/over the bridge's limit of 16777216/);
    expect(run.toolCalls).toHaveLength(9);
    // Everything the run's records hold: 9 calls of 1 to 17 MiB each, kept in under 40 kB.
    expect(JSON.stringify(run.toolCalls).length).toBeLessThan(40_000);
    const [echoed, refused] = run.toolCalls;
    expect(echoed).toMatchObject({ tool: "echo", status: "ok" });
    expect(echoed?.args).toBeUndefined();
    expect(echoed?.argsPreview).toHaveLength(previewCharacters);
    expect(echoed?.requestBytes).toBeGreaterThan(1024 * 1024 - 100);
    expect(echoed?.result).toBeUndefined();
    expect(echoed?.resultPreview?.startsWith('{"echoed":"xxx')).toBe(true);
    expect(echoed?.resultBytes).toBeGreaterThan(1024 * 1024 - 100);
    expect(echoed?.resultLength).toBe(1); // a dict with one key: a summary can still say so
    expect(refused).toMatchObject({ tool: "nope", status: "unknown-tool" });
    expect(refused?.args).toBeUndefined();
    expect(refused?.argsPreview).toBeUndefined();
    expect(refused?.requestBytes).toBeGreaterThan(1024 * 1024 - 100);
    const oversized = run.toolCalls.at(-1);
    expect(oversized).toMatchObject({ tool: "big", status: "error", resultBytes: 17 * 1024 * 1024 + 2 });
    expect(oversized?.result).toBeUndefined();
    expect(oversized?.resultPreview).toBeUndefined();
  });

  test("a result far over maxResultBytes is refused after a look at its size, never encoded whole", async () => {
    // 100,000 rows whose every read is counted: encoding them would read each one.
    const { items: rows, counter: reads } = countedItems(100_000);
    const tool: ToolSpec = {
      name: "rows",
      description: "Returns many rows.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: async () => rows,
    };
    const run = await runLocally({
      program: `
try:
    rows()
except ToolError as error:
    print("RESULT:", error)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      maxResultBytes: 64 * 1024,
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toMatch(
      /^the result of rows is at least \d+ bytes, over the bridge's limit of 65536 bytes/,
    );
    expect(run.toolCalls[0]).toMatchObject({ status: "error" });
    expect(run.toolCalls[0]?.resultBytes).toBeGreaterThan(65536);
    // About 64 KiB worth of rows were looked at (each is at least 16 bytes), not 100,000.
    expect(reads.reads).toBeLessThan(6000);
  });

  test("requests past maxToolCalls are refused unparsed, and still name their tool", async () => {
    const { tool, calls } = echoTool();
    const parse = vi.spyOn(JSON, "parse");
    try {
      const run = await runLocally({
        program: `
from codeaction_tools import _call
payload = "{}" * (512 * 1024 - 64)
seen = []
for index in range(6):
    try:
        _call("echo", {"value": payload})
        seen.append("ok")
    except Exception as error:
        seen.append(type(error).__name__)
print("RESULT:", ",".join(seen))
`,
        stubsSource: renderStubsModule([tool]),
        tools: [tool],
        maxToolCalls: 2,
      });
      expect(run.status, run.stderr).toBe("tool-limit");
      expect(run.result).toBe(
        "ok,ok,ToolCallLimitExceeded,ToolCallLimitExceeded,ToolCallLimitExceeded,ToolCallLimitExceeded",
      );
      expect(calls).toHaveLength(2);
      expect(run.toolCalls.map((call) => [call.tool, call.status])).toEqual([
        ["echo", "ok"],
        ["echo", "ok"],
        ["echo", "limit"],
        ["echo", "limit"],
        ["echo", "limit"],
        ["echo", "limit"],
      ]);
      // Only the two calls under the cap had their 1 MiB request parsed on the host.
      const largeParses = parse.mock.calls.filter(
        ([text]) => typeof text === "string" && text.length > 512 * 1024,
      );
      expect(largeParses).toHaveLength(2);
    } finally {
      parse.mockRestore();
    }
  });

  test("small arguments and results are still kept whole", async () => {
    const { tool } = echoTool();
    const run = await runLocally({
      program: `print("RESULT:", echo(value={"a": [1, 2, 3]})["echoed"]["a"][2])`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.result).toBe("3");
    expect(run.toolCalls).toMatchObject([
      { tool: "echo", status: "ok", args: { value: { a: [1, 2, 3] } }, result: { echoed: { a: [1, 2, 3] } } },
    ]);
    expect(run.toolCalls[0]?.argsPreview).toBeUndefined();
  });
});

describe("flooding the bridge", () => {
  test("ringing valid ids with no request file ends the run as a tool-limit failure, long before its timeout", async () => {
    const events: string[] = [];
    const run = await runLocally({
      program: `
import os, itertools
for index in itertools.count():
    os.write(3, b"ring%d\\n" % index)
`,
      stubsSource: "",
      tools: [],
      maxToolCalls: 5,
      execTimeout: 60,
      onEvent: (event) => events.push(event.type),
    });
    expect(run.status).toBe("tool-limit");
    expect(run.toolCalls.length).toBeLessThanOrEqual(5 + 100);
    // Each ring was recorded (an empty list would make the next line true whatever happened).
    expect(run.toolCalls.length).toBeGreaterThan(5);
    expect(run.toolCalls.every((call) => call.status === "invalid" || call.status === "limit")).toBe(true);
    expect(events.length).toBeLessThanOrEqual(2 * (5 + 100 + 16));
  });

  test("repeating one answered id is a flood too", async () => {
    const { tool } = echoTool();
    const run = await runLocally({
      program: `
import json, os, select
path = os.path.join(os.environ["CODEACTION_BRIDGE_DIR"], "requests", "again.json")
with open(path, "w") as file:
    json.dump({"id": "again", "tool": "echo", "args": {"value": 1}}, file)
os.write(3, b"again\\n")
select.select([4], [], [], 10)
while True:
    os.write(3, b"again\\n")
`,
      stubsSource: "",
      tools: [tool],
      maxToolCalls: 5,
      execTimeout: 60,
    });
    expect(run.status).toBe("tool-limit");
    expect(run.toolCalls).toHaveLength(1);
  });

  test("the relay holds at most 16 requests for the host at once; the rest wait in the program", async () => {
    const { tool, state } = slowTool(50);
    const run = await runLocally({
      program: `
import json, threading
results = {}
def work(index):
    results[index] = slow(value=index)["echoed"]
threads = [threading.Thread(target=work, args=(index,)) for index in range(48)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print("RESULT:", json.dumps(all(results[index] == index for index in range(48))))
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      maxToolCalls: 48,
    });
    expect(run.result, run.stderr).toBe("true");
    expect(state.calls).toBe(48);
    expect(state.most).toBeGreaterThan(1);
    expect(state.most).toBeLessThanOrEqual(16);
  });
});
