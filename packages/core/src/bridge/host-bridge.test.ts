import { describe, expect, test } from "vitest";
import { echoTool, isRunning, runLocally } from "../../test/local-relay.ts";
import { renderStubsModule } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";

/** A tool named `fail` that always throws `message`. */
function failingTool(message: string): ToolSpec {
  return {
    name: "fail",
    description: "Always fails.",
    origin: "tool",
    inputSchema: { type: "object", properties: {} },
    invoke: async () => {
      throw new Error(message);
    },
  };
}

// Protocol tests: the real relay and codeaction_tools module, run by this machine's python3 over
// pipes, with the bridge folder in a temp dir. Hostile programs forge requests by hand.

/** Python helpers for forging requests: write a file, ring fd 3, wait on fd 4, read the response. */
const forge = String.raw`
import json, os, select
BRIDGE = os.environ["CODEACTION_BRIDGE_DIR"]
REQUESTS = os.path.join(BRIDGE, "requests")
RESPONSES = os.path.join(BRIDGE, "responses")
def ring(line):
    os.write(3, (line.encode() if isinstance(line, str) else line) + b"\n")
def put(request_id, data):
    with open(os.path.join(REQUESTS, request_id + ".json"), "wb") as file:
        file.write(data if isinstance(data, bytes) else json.dumps(data).encode())
def rung(timeout=10):
    ready, _, _ = select.select([4], [], [], timeout)
    return os.read(4, 65536).decode().split() if ready else []
def answer(request_id):
    with open(os.path.join(RESPONSES, request_id + ".json")) as file:
        return json.load(file)
def forged(request_id, data=None):
    if data is not None:
        put(request_id, data)
    ring(request_id)
    got = rung()
    assert got == [request_id], got
    return answer(request_id)
def echo_request(request_id, value="x"):
    return {"id": request_id, "tool": "echo", "args": {"value": value}}
`;

describe("requests the program forges", () => {
  test("ids outside the grammar are ignored and the channel keeps working", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
for bad in ["../etc/passwd", "a/b", "x" * 10000, "\u00e9t\u00e9", "", "a b", "a.json"]:
    ring(bad)
ring(b"a\\x00b")
print("RESULT:", forged("good1", echo_request("good1", 7)))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("{'ok': True, 'value': {'echoed': 7}}");
    expect(calls).toEqual([{ value: 7 }]);
    expect(run.toolCalls.map((call) => call.id)).toEqual(["good1"]);
  });

  test("a 10 MB request is refused before it is read; the tool never runs", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
reply = forged("big", b'{"id": "big", "tool": "echo", "args": {"value": "' + b"x" * (10 * 1024 * 1024) + b'"}}')
print("RESULT:", json.dumps(reply))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    const reply = JSON.parse(run.result!);
    expect(reply.ok).toBe(false);
    expect(reply.error.type).toBe("ToolError");
    expect(reply.error.message).toMatch(
      /the request is larger than 1048576 bytes \(it is \d+ bytes; the limit is codeAction.maxRequestBytes\)/,
    );
    expect(calls).toEqual([]);
    expect(run.toolCalls).toMatchObject([{ id: "big", status: "invalid" }]);
  });

  test("invalid JSON, NaN, deep nesting and wrong shapes get error answers", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
cases = {
    "notjson": b"this is not json",
    "nan": b'{"id": "nan", "tool": "echo", "args": {"value": NaN}}',
    "utf": b'{"id": "utf", "tool": "echo", "args": {"value": "\\xff"}}',
    "deep": ('{"id": "deep", "tool": "echo", "args": {"value": ' + "[" * 100000 + "]" * 100000 + "}}").encode(),
    "list": {"id": "list", "tool": "echo", "args": [1, 2]},
    "noargs": {"id": "noargs", "tool": "echo"},
    "notool": {"id": "notool", "args": {}},
    "mismatch": {"id": "other", "tool": "echo", "args": {}},
    "array": [1, 2, 3],
}
answers = {name: forged(name, data) for name, data in cases.items()}
print("RESULT:", json.dumps(answers))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    const answers = JSON.parse(run.result!) as Record<string, { ok: boolean; error: { message: string } }>;
    expect(Object.keys(answers)).toHaveLength(9);
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.ok, name).toBe(false);
      expect(answer.error.message, name).toMatch(/^invalid tool call: /);
    }
    expect(answers.deep!.error.message).toContain("nested deeper than 64");
    expect(answers.mismatch!.error.message).toContain("does not match");
    expect(calls).toEqual([]);
    expect(run.toolCalls.every((call) => call.status === "invalid")).toBe(true);
  });

  test("a symlink, a FIFO or a folder at a request path is refused without following or blocking", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
os.symlink("/etc/passwd", os.path.join(REQUESTS, "link.json"))
os.mkfifo(os.path.join(REQUESTS, "fifo.json"))
os.mkdir(os.path.join(REQUESTS, "folder.json"))
answers = {name: forged(name) for name in ["link", "fifo", "folder", "missing"]}
print("RESULT:", json.dumps(answers))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    const answers = JSON.parse(run.result!) as Record<string, { ok: boolean; error: { message: string } }>;
    expect(answers.link!.error.message).toContain("could not be opened");
    expect(answers.fifo!.error.message).toContain("not a regular file");
    expect(answers.folder!.error.message).toContain("not a regular file");
    expect(answers.missing!.error.message).toContain("does not exist");
    expect(run.result).not.toContain("root:");
    expect(calls).toEqual([]);
  });

  test("a replayed id is answered with an error and never run twice", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
first = forged("again", echo_request("again", 1))
second = forged("again", echo_request("again", 2))
print("RESULT:", json.dumps([first, second]))
`,
      stubsSource: "",
      tools: [tool],
    });
    const [first, second] = JSON.parse(run.result!);
    expect(first).toEqual({ ok: true, value: { echoed: 1 } });
    expect(second.ok).toBe(false);
    expect(second.error.message).toContain("already answered");
    expect(calls).toEqual([{ value: 1 }]);
  });

  test("a response file the program wrote itself is replaced by the host's answer", async () => {
    const { tool } = echoTool();
    const run = await runLocally({
      program: `${forge}
with open(os.path.join(RESPONSES, "pre.json"), "w") as file:
    json.dump({"ok": True, "value": "forged"}, file)
print("RESULT:", json.dumps(forged("pre", echo_request("pre", "real"))))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(JSON.parse(run.result!)).toEqual({ ok: true, value: { echoed: "real" } });
  });

  test("a folder at a response path does not stall the relay", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
os.mkdir(os.path.join(RESPONSES, "blocked.json"))
put("blocked", echo_request("blocked"))
ring("blocked")
assert rung() == ["blocked"]
print("RESULT:", json.dumps(forged("after", echo_request("after", 2))))
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(JSON.parse(run.result!)).toEqual({ ok: true, value: { echoed: 2 } });
    expect(calls).toHaveLength(2);
  });

  test("a request written after the program ended is ignored", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `${forge}
if os.fork() == 0:
    os.setsid()
    # Wait until the relay has seen the program end: it then closes the doorbell's read end, which
    # poll reports as POLLERR on fd 3 (no sleep: the relay's reaction time varies with load).
    doorbell = select.poll()
    doorbell.register(3, select.POLLERR)
    for _ in range(600):
        if doorbell.poll(100):
            break
    try:
        put("late", echo_request("late"))
        ring("late")
    finally:
        os._exit(0)
print("RESULT: left")
`,
      stubsSource: "",
      tools: [tool],
    });
    expect(run.status).toBe("ok");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(calls).toEqual([]);
    expect(run.toolCalls).toEqual([]);
  });
});

describe("calls through the stubs", () => {
  test("100 concurrent calls from threads are each answered once, with their own value", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `
import threading
results = {}
def work(index):
    results[index] = echo(value=index)["echoed"]
threads = [threading.Thread(target=work, args=(index,)) for index in range(100)]
for thread in threads: thread.start()
for thread in threads: thread.join()
assert results == {index: index for index in range(100)}, results
print("RESULT:", len(results))
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      maxToolCalls: 100,
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("100");
    expect(calls.map((call) => call.value).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: 100 }, (_, index) => index),
    );
    expect(new Set(run.toolCalls.map((call) => call.id)).size).toBe(100);
  });

  test("unknown tools and case variants are refused and count against the cap", async () => {
    const { tool, calls } = echoTool();
    const run = await runLocally({
      program: `
from codeaction_tools import _call
messages = []
for name in ["ECHO", "nope"]:
    try:
        _call(name, {})
    except ToolError as error:
        messages.append(str(error))
try:
    echo(value=1)
except ToolCallLimitExceeded as error:
    messages.append("limit: " + str(error))
print(messages)
print("RESULT: caught")
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      maxToolCalls: 2,
    });
    expect(run.stdout).toContain('unknown tool "ECHO"');
    expect(run.stdout).toContain('unknown tool "nope"');
    expect(run.stdout).toContain("limit: the run may make at most 2 tool calls");
    expect(calls).toEqual([]);
    expect(run.status).toBe("tool-limit");
    expect(run.toolCalls.map((call) => call.status)).toEqual(["unknown-tool", "unknown-tool", "limit"]);
  });

  test("results arrive as the Python values they are (the documented mapping), records stay JSON-safe", async () => {
    class Row {
      readonly id: number;
      constructor(id: number) {
        this.id = id;
      }
    }
    const values: Record<string, unknown> = {
      nested: { list: [1, 2.5, "three", null, true], inner: { deep: { deeper: [] } } },
      missing: undefined,
      date: new Date("2026-01-02T03:04:05.000Z"),
      big: 123456789012345678901234567890n,
      map: new Map([["a", 1]]),
      intMap: new Map([[1, "one"]]),
      set: new Set(["x", "y"]),
      nan: Number.NaN,
      infinity: Number.NEGATIVE_INFINITY,
      bytes: Buffer.from([0, 255, 1]),
      floats: new Float64Array([0.5, 1.5]),
      undefinedField: { kept: undefined },
      row: { rows: [new Row(1)] },
      callback: { run: () => 1 },
    };
    const tool: ToolSpec = {
      name: "value",
      description: "Returns a value by key.",
      origin: "tool",
      inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      invoke: async (args) => values[args.key as string],
    };
    const run = await runLocally({
      program: `
import math
got = {key: value(key=key) for key in ["nested", "missing", "date", "big", "map", "intMap", "set", "nan", "infinity", "bytes", "floats", "undefinedField"]}
checks = [
    got["nested"] == {"list": [1, 2.5, "three", None, True], "inner": {"deep": {"deeper": []}}},
    got["missing"] is None,
    got["date"] == "2026-01-02T03:04:05.000Z",
    got["big"] == 123456789012345678901234567890 and type(got["big"]) is int,
    got["map"] == {"a": 1},
    got["intMap"] == {1: "one"},
    sorted(got["set"]) == ["x", "y"] and type(got["set"]) is list,
    type(got["nan"]) is float and math.isnan(got["nan"]),
    got["infinity"] == float("-inf"),
    got["bytes"] == b"\\x00\\xff\\x01",
    got["floats"] == [0.5, 1.5],
    got["undefinedField"] == {"kept": None},
]
errors = []
for key in ["row", "callback"]:
    try:
        value(key=key)
    except ToolError as error:
        errors.append(str(error))
print("RESULT:", checks, errors)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toContain(`[${Array(12).fill("True").join(", ")}]`);
    expect(run.result).toContain(
      "The tool 'value' returned a value that cannot be passed on: result.rows[0] is a Row instance with no toJSON()",
    );
    expect(run.result).toContain("result.run is a function");
    const records = Object.fromEntries(
      run.toolCalls.map((call) => [(call.args as { key: string }).key, call]),
    );
    expect(records.big).toMatchObject({ status: "ok", result: "123456789012345678901234567890" });
    expect(records.nan).toMatchObject({ status: "ok", result: "NaN" });
    expect(records.bytes).toMatchObject({ status: "ok", result: { base64: "AP8B" } });
    expect(records.row).toMatchObject({ status: "error" });
    expect(() => JSON.stringify(run.toolCalls)).not.toThrow();
  });

  test("an unknown key anywhere in the arguments is refused, naming it and the closest valid one", async () => {
    const calls: unknown[] = [];
    const tool: ToolSpec = {
      name: "sales",
      description: "Sales, filtered.",
      origin: "tool",
      inputSchema: {
        type: "object",
        properties: {
          filter: {
            type: "object",
            properties: { regions: { type: "array", items: { type: "string" } } },
            additionalProperties: false,
          },
        },
        additionalProperties: false,
      },
      invoke: async (args) => {
        calls.push(args);
        return 1;
      },
    };
    const run = await runLocally({
      program: `
try:
    sales(filter={"region": ["EMEA"]})
except ToolError as error:
    print("RESULT:", error)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe(
      "Invalid input for tool 'sales': filter.region: unknown key; did you mean 'regions'? Call it again with arguments that match its schema.",
    );
    expect(calls).toEqual([]);
    expect(run.toolCalls).toMatchObject([{ tool: "sales", status: "invalid" }]);
  });

  test("a result over maxResultBytes is recorded as an error with its size and the limit", async () => {
    const tool: ToolSpec = {
      name: "blob",
      description: "A big string.",
      origin: "tool",
      inputSchema: { type: "object", properties: { size: { type: "integer" }, quotes: { type: "boolean" } } },
      invoke: async (args) => (args.quotes ? '"' : "x").repeat(args.size as number),
    };
    const run = await runLocally({
      program: `
print(len(blob(size=1000)))
errors = []
for size, quotes in [(5000, False), (3000, True)]:
    try:
        blob(size=size, quotes=quotes)
    except ToolError as error:
        errors.append(str(error))
print("RESULT:", " | ".join(errors))
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      maxResultBytes: 4096,
    });
    expect(run.status, run.stderr).toBe("ok");
    // Over the limit by its length alone: refused before it is encoded, with that lower bound.
    const byLength =
      "the result of blob is at least 5002 bytes, over the bridge's limit of 4096 bytes (codeAction.maxResultBytes)";
    // Under it by length, over it once encoded (every quote escaped): the exact size.
    const byEncoding =
      "the result of blob is 6002 bytes, over the bridge's limit of 4096 bytes (codeAction.maxResultBytes)";
    expect(run.result).toContain(byLength);
    expect(run.result).toContain(byEncoding);
    expect(run.toolCalls.map((call) => call.status)).toEqual(["ok", "error", "error"]);
    expect(run.toolCalls[1]?.error).toContain(byLength);
    expect(run.toolCalls[1]?.resultBytes).toBe(5002);
    expect(run.toolCalls[2]?.error).toContain(byEncoding);
    expect(run.toolCalls[2]?.resultBytes).toBe(6002);
  });

  test("tracebacks show the program's own lines only: no bootstrap or codeaction_tools frame", async () => {
    const tool = failingTool("no such region");
    const uncaught = await runLocally({
      program: "def load():\n    return fail()\n\nload()\n",
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(uncaught.status).toBe("error");
    expect(uncaught.stderr).toMatch(/program\.py", line 4, in <module>\n {4}load\(\)\n/);
    expect(uncaught.stderr).toMatch(/program\.py", line 2, in load\n/);
    expect(uncaught.stderr).toContain("ToolError: no such region");
    expect(uncaught.stderr).not.toMatch(/<string>|codeaction_tools\.py/);

    const syntax = await runLocally({ program: "x = 1\nprint(x\n", stubsSource: "", tools: [] });
    expect(syntax.status).toBe("error");
    expect(syntax.stderr).toMatch(/program\.py", line 2\n/);
    expect(syntax.stderr).toContain("SyntaxError: '(' was never closed");
    expect(syntax.stderr).not.toMatch(/<string>|Traceback/);
  });

  test("a tool that throws raises ToolError, which the program can catch", async () => {
    const tool = failingTool("the database is down");
    const run = await runLocally({
      program: `
try:
    fail()
except ToolError as error:
    print("RESULT:", type(error).__name__, error)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.status).toBe("ok");
    expect(run.result).toBe("ToolError the database is down");
    expect(run.toolCalls).toMatchObject([{ tool: "fail", status: "error", error: "the database is down" }]);
  });

  test("approval sees tool, args and runId; a denial raises ToolDenied with its reason", async () => {
    const { tool, calls } = echoTool();
    const seen: unknown[] = [];
    const run = await runLocally({
      program: `
out = [echo(value="yes")["echoed"]]
try:
    echo(value="no")
except ToolDenied as error:
    out.append(f"denied: {error} ({isinstance(error, ToolError)})")
print("RESULT:", out)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      runId: "run-approval",
      approval: (call) => {
        seen.push(call);
        return call.args.value === "yes" ? true : { approved: false, reason: "no means no" };
      },
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("['yes', 'denied: no means no (True)']");
    expect(seen).toEqual([
      { tool: "echo", args: { value: "yes" }, runId: "run-approval", signal: expect.any(AbortSignal) },
      { tool: "echo", args: { value: "no" }, runId: "run-approval", signal: expect.any(AbortSignal) },
    ]);
    expect(calls).toEqual([{ value: "yes" }]);
    expect(run.toolCalls.map((call) => call.status)).toEqual(["ok", "denied"]);
  });

  test("approval fails closed: a bare false, anything but true, and a hook that throws all deny", async () => {
    const { tool, calls } = echoTool();
    const decisions: unknown[] = [false, "yes", { approved: "true" }, new Error("approval service down")];
    const run = await runLocally({
      program: `
out = []
for _ in range(4):
    try:
        echo(value="x")
        out.append("ran")
    except ToolDenied as error:
        out.append(str(error))
print("RESULT:", " | ".join(out))
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      approval: () => {
        const decision = decisions.shift();
        if (decision instanceof Error) throw decision;
        return decision as never;
      },
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe(
      [
        "the call to echo was not approved",
        "the call to echo was not approved",
        "the call to echo was not approved",
        "the approval hook failed, so the call to echo was not made: approval service down",
      ].join(" | "),
    );
    expect(calls).toEqual([]);
    expect(run.toolCalls.map((call) => call.status)).toEqual(["denied", "denied", "denied", "denied"]);
  });

  test("time waiting for approval does not count against execTimeout", async () => {
    const { tool } = echoTool();
    const run = await runLocally({
      program: `print("RESULT:", echo(value=1)["echoed"])`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
      execTimeout: 1,
      // Longer than execTimeout: counted, the wait alone would end the program.
      approval: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return true;
      },
    });
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("1");
  });

  test("calls still running when the program ends are cancelled", async () => {
    let signal: AbortSignal | undefined;
    const tool: ToolSpec = {
      name: "hang",
      description: "Never answers.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: (_args, context) => {
        signal = context.signal;
        return new Promise(() => undefined);
      },
    };
    const run = await runLocally({
      program: `
import threading, time
threading.Thread(target=hang, daemon=True).start()
time.sleep(0.5)
print("RESULT: gone")
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.status).toBe("ok");
    expect(signal?.aborted).toBe(true);
    expect(run.toolCalls).toMatchObject([
      { tool: "hang", status: "cancelled", error: "the program ended before the call finished" },
    ]);
  });
});

describe("the program's output", () => {
  test("1 GiB of stdout is capped, the tail is kept, and host memory stays flat", async () => {
    const before = process.memoryUsage().rss;
    const run = await runLocally({
      program: `
import sys
chunk = b"x" * 1023 + b"\\n"
block = chunk * 1024
for _ in range(1024):
    sys.stdout.buffer.write(block)
print("RESULT: survived")
`,
      stubsSource: "",
      tools: [],
    });
    const growth = process.memoryUsage().rss - before;
    expect(run.status, run.stderr).toBe("ok");
    expect(run.result).toBe("survived");
    expect(run.truncated).toBe(true);
    expect(run.stdout.length).toBeLessThanOrEqual(1024 * 1024 + 200);
    expect(run.stdout).toMatch(/\[\.\.\. \d+ bytes of stdout omitted \.\.\.\]/);
    expect(growth).toBeLessThan(200 * 1024 * 1024);
  }, 180_000);

  test("one huge line without a newline: the cut line never counts, the last RESULT still does", async () => {
    const run = await runLocally({
      program: `
import sys
sys.stdout.write("RESULT: " + "9" * 3_000_000)
sys.stdout.write("\\nRESULT: 7\\n")
`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(run.result).toBe("7");
    expect(run.truncated).toBe(true);
    expect(run.stdout).toContain("[... cut here:");
  });

  test("when the cap cuts the RESULT line short, the run has no result rather than a wrong one", async () => {
    const run = await runLocally({
      program: `print("RESULT: " + "1" * 400_000)`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(run.truncated).toBe(true);
    expect(run.result).toBeUndefined();
    expect(run.status).toBe("no-result");
  });

  test("the last RESULT line decides even when the cap drops it: an earlier visible one is not the answer", async () => {
    // 100 kB cap: a 75 kB head is forwarded, a 25 kB tail kept, the middle dropped.
    const lost = await runLocally({
      program: `
print("RESULT: draft")
print("x" * 200_000)
print("RESULT: final")
print("y" * 60_000)
`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(lost.stdout).toContain("RESULT: draft");
    expect(lost.stdout).not.toContain("RESULT: final");
    expect(lost).toMatchObject({ status: "no-result", truncated: true });
    expect(lost.result).toBeUndefined();
    // Dropped RESULT lines before the last one do not matter; the one in the tail is the answer.
    const kept = await runLocally({
      program: `
print("RESULT: draft")
print("x" * 200_000)
print("RESULT: dropped")
print("y" * 60_000)
print("RESULT: final")
`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(kept).toMatchObject({ status: "ok", result: "final", truncated: true });
    // A RESULT line whole in the head, then only noise: still the answer.
    const head = await runLocally({
      program: `
print("RESULT: early")
print("x" * 300_000)
`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(head).toMatchObject({ status: "ok", result: "early", truncated: true });
    // The line that straddles the head's end is the last RESULT line: cut short, so no answer.
    const straddling = await runLocally({
      program: `
import sys
sys.stdout.write("RESULT: 1\\n" + "z" * 74_980 + "\\nRESULT: 12" + "3" * 100_000 + "\\n" + "w" * 50_000)
`,
      stubsSource: "",
      tools: [],
      maxOutputBytes: 100_000,
    });
    expect(straddling).toMatchObject({ status: "no-result", truncated: true });
  });

  test("RESULT lines in stderr or inside a tool result never count", async () => {
    const tool: ToolSpec = {
      name: "sneaky",
      description: "Returns a fake result line.",
      origin: "tool",
      inputSchema: { type: "object", properties: {} },
      invoke: async () => "\nRESULT: from-the-tool\n",
    };
    const run = await runLocally({
      program: `
import sys
value = sneaky()
print("RESULT: from-stderr", file=sys.stderr)
print("RESULT: real")
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(run.result).toBe("real");
    const quiet = await runLocally({
      program: `
import sys
sneaky()
print("RESULT: from-stderr", file=sys.stderr)
`,
      stubsSource: renderStubsModule([tool]),
      tools: [tool],
    });
    expect(quiet.status).toBe("no-result");
    expect(quiet.result).toBeUndefined();
  });

  test("bytes that are not UTF-8 are kept exactly (base64) next to the text; valid output has no copy", async () => {
    const run = await runLocally({
      program: String.raw`
import sys
sys.stdout.buffer.write(b"caf\xc3\xa9 \xff\xfe end\n")
sys.stderr.buffer.write(b"half \xe2\x82\n")
print("RESULT: done")
`,
      stubsSource: "",
      tools: [],
    });
    expect(run.stdout, run.stderr).toBe("café \ufffd\ufffd end\nRESULT: done\n");
    expect(Buffer.from(run.stdoutBase64 ?? "", "base64")).toEqual(
      Buffer.concat([Buffer.from("caf\xc3\xa9 \xff\xfe end\n", "latin1"), Buffer.from("RESULT: done\n")]),
    );
    expect(Buffer.from(run.stderrBase64 ?? "", "base64")).toEqual(Buffer.from("half \xe2\x82\n", "latin1"));
    const clean = await runLocally({ program: 'print("RESULT: café")', stubsSource: "", tools: [] });
    expect(clean.result).toBe("café");
    expect(clean).not.toHaveProperty("stdoutBase64");
    expect(clean).not.toHaveProperty("stderrBase64");
  });

  test("the program sees an empty stdin, and only fds 0-4", async () => {
    const run = await runLocally({
      program: `
import os, sys
print("RESULT:", repr(sys.stdin.read()), sorted(int(fd) for fd in os.listdir("/proc/self/fd")))
`,
      stubsSource: "",
      tools: [],
    });
    // The listing's own descriptor shows up as the fifth entry.
    expect(run.result).toMatch(/^'' \[0, 1, 2, 3, 4, \d+\]$/);
  });
});

describe("ending", () => {
  test("a timeout kills the program and its process group", async () => {
    const run = await runLocally({
      program: `
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print(os.getpid(), child.pid, flush=True)
time.sleep(300)
`,
      stubsSource: "",
      tools: [],
      execTimeout: 1,
    });
    expect(run.status).toBe("timeout");
    const pids = run.stdout.trim().split(" ").map(Number);
    expect(pids).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const pid of pids) expect(isRunning(pid), `pid ${pid}`).toBe(false);
  });
});
