import { existsSync } from "node:fs";
import { PackageRefusedError, type SandboxManager } from "@codeaction/sandbox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { backends, echoTool, hostileMarker, readyManager, resultJson, runCase } from "../support/harness.ts";

// Catalogue B1..B10 and the bridge abuse list: the program forges what the stubs would write
// (request files in /workspace/.codeaction/requests, the doorbell on fd 3; docs/bridge-protocol.md)
// and the host must answer with an error or ignore it, never crash, block, follow a link or call
// a tool it should not.

/**
 * `forge(body, request_id=None, kind="file")` writes a request by hand, rings the doorbell and waits
 * (10 s at most) for the answer through the module's own reply reader. kind: "file", "symlink",
 * "fifo", "directory". Returns the response object, or {"problem": ...} / {"timeout": true}.
 */
const forgePrelude = `
import json, os, secrets, threading, time
import codeaction_tools as tools
bridge = tools._bridge
requests = os.path.join(bridge.directory, "requests")
responses = os.path.join(bridge.directory, "responses")

def ring(request_id):
    os.write(bridge.request_fd, request_id.encode() if isinstance(request_id, str) else request_id)
    os.write(bridge.request_fd, b"\\n")

def forge(body=b"", request_id=None, kind="file", wait=10):
    request_id = request_id or secrets.token_hex(12)
    waiter = tools._Waiter()
    with bridge.lock:
        bridge.waiters[request_id] = waiter
        if bridge.reader is None:
            bridge.reader = threading.Thread(target=bridge._read_replies, daemon=True)
            bridge.reader.start()
    path = os.path.join(requests, request_id + ".json")
    if kind == "file":
        temporary = os.path.join(requests, "." + request_id + ".tmp")
        with open(temporary, "wb") as file:
            file.write(body)
        os.rename(temporary, path)
    elif kind == "symlink":
        os.symlink(body.decode(), path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        os.mkdir(path)
    ring(request_id)
    if not waiter.event.wait(wait):
        return {"timeout": True}
    return waiter.response if waiter.response is not None else {"problem": waiter.problem}

def request(tool, args, request_id):
    return json.dumps({"id": request_id, "tool": tool, "args": args}).encode()
`;

type Response = {
  ok?: boolean;
  value?: unknown;
  error?: { type: string; message: string };
  timeout?: boolean;
};

describe.each(backends)("bridge abuse (backend %s)", (backend) => {
  let manager: SandboxManager;
  beforeAll(async () => {
    manager = await readyManager(backend);
  });
  afterAll(async () => {
    await manager?.close();
  });

  test("B1: request ids with ../, /, NUL, 10 kB, unicode are ignored by the id grammar; a real call still works", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
bad_ids = [b"../responses/x", b"a/b", b"../../../../etc/passwd", b"a\\0b", b"x" * 10000, "ünïcødé".encode(), b"", b" spaced", b"id.json"]
for bad in bad_ids:
    try:
        # The file is where a naive relay would look for it; the id itself never passes the grammar.
        with open(os.path.join(requests, "${hostileMarker}.json"), "wb") as file:
            file.write(json.dumps({"id": "x", "tool": "echo", "args": {"value": "forged"}}).encode())
    except OSError:
        pass
    ring(bad)
time.sleep(1)
print("RESULT:", json.dumps(echo(value="real")))
`,
    });
    expect(resultJson(run)).toEqual({ echoed: "real" });
    expect(calls).toEqual([{ value: "real" }]);
    expect(run.toolCalls).toHaveLength(1);
  });

  test("B2: a 10 MB request is refused before it is parsed", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
answers = {}
try:
    echo(value="x" * 10_000_000)
    answers["stub"] = "answered"
except ToolError as error:
    answers["stub"] = str(error)
request_id = secrets.token_hex(8)
answers["forged"] = forge(request("echo", {"value": "y" * 10_000_000}, request_id), request_id)
print("RESULT:", json.dumps(answers))
`,
    });
    const answers = resultJson<{ stub: string; forged: Response }>(run);
    expect(answers.stub).toMatch(/larger than 1048576 bytes/);
    expect(answers.forged.error?.message).toMatch(/larger than 1048576 bytes/);
    expect(calls).toEqual([]);
  });

  test("B3: invalid JSON, 100,000-deep nesting, NaN and wrong types get an error back; the host carries on", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
answers = {}
def forged(name, make):
    request_id = secrets.token_hex(8)
    answers[name] = forge(make(request_id), request_id)
forged("not json", lambda i: b"{this is not json")
forged("not utf-8", lambda i: b'{"id": "' + i.encode() + b'", "tool": "echo", "args": {"value": "\\xff\\xfe"}}')
forged("deep objects", lambda i: b'{"id": "' + i.encode() + b'", "tool": "echo", "args": ' + b'{"a": ' * 100000 + b'1' + b'}' * 100000 + b'}')
forged("deep arrays", lambda i: b'{"id": "' + i.encode() + b'", "tool": "echo", "args": {"value": ' + b'[' * 100000 + b']' * 100000 + b'}}')
forged("NaN", lambda i: b'{"id": "' + i.encode() + b'", "tool": "echo", "args": {"value": NaN}}')
forged("tool not a string", lambda i: json.dumps({"id": i, "tool": 5, "args": {}}).encode())
forged("args a list", lambda i: json.dumps({"id": i, "tool": "echo", "args": [1]}).encode())
forged("args a string", lambda i: json.dumps({"id": i, "tool": "echo", "args": "value"}).encode())
forged("request a list", lambda i: json.dumps([i, "echo", {}]).encode())
forged("id mismatch", lambda i: json.dumps({"id": "other", "tool": "echo", "args": {}}).encode())
forged("empty", lambda i: b"")
answers["after"] = echo(value="still works")
print("RESULT:", json.dumps(answers))
`,
    });
    const answers = resultJson<Record<string, Response>>(run);
    const { after, ...forgeries } = answers;
    expect(after).toEqual({ echoed: "still works" });
    expect(Object.keys(forgeries)).toHaveLength(11);
    for (const [name, answer] of Object.entries(forgeries)) {
      expect(answer.ok, name).toBe(false);
      expect(answer.error?.type, name).toBe("ToolError");
      expect(answer.error?.message, name).toMatch(/^invalid tool call: /);
    }
    expect(calls).toEqual([{ value: "still works" }]);
  });

  test("B4, B5: unknown and case-variant tools are refused and counted; the call past maxToolCalls never reaches the tool", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      maxToolCalls: 3,
      program: `${forgePrelude}
answers = []
for name in ["ECHO", "nope", "echo", "echo"]:
    request_id = secrets.token_hex(8)
    answers.append(forge(request(name, {"value": name}, request_id), request_id))
print("RESULT:", json.dumps(answers))
`,
    });
    expect(run.status).toBe("tool-limit");
    const answers = JSON.parse(run.result!) as Response[];
    expect(answers[0]!.error?.message).toMatch(/^unknown tool "ECHO"/);
    expect(answers[1]!.error?.message).toMatch(/^unknown tool "nope"/);
    expect(answers[2]).toEqual({ ok: true, value: { echoed: "echo" } });
    expect(answers[3]!.error?.type).toBe("ToolCallLimitExceeded");
    expect(calls).toEqual([{ value: "echo" }]);
    expect(run.toolCalls.map((call) => call.status)).toEqual(["unknown-tool", "unknown-tool", "ok", "limit"]);
  });

  test("B6: 100 concurrent calls from threads are each answered exactly once, with no crosstalk", async () => {
    const { tool, calls } = echoTool({ delayMs: 20 });
    const run = await runCase(manager, {
      tools: [tool],
      maxToolCalls: 100,
      program: `
import json, threading
results, errors = {}, []
def work(index):
    try:
        results.setdefault(index, []).append(echo(value=index)["echoed"])
    except Exception as error:
        errors.append(repr(error))
threads = [threading.Thread(target=work, args=(index,)) for index in range(100)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print("RESULT:", json.dumps({"crossed": [i for i, got in results.items() if got != [i]], "count": len(results), "errors": errors}))
`,
    });
    expect(resultJson(run)).toEqual({ crossed: [], count: 100, errors: [] });
    expect(calls).toHaveLength(100);
    expect(new Set(run.toolCalls.map((call) => call.id)).size).toBe(100);
  });

  test("B7: a response the program wrote itself (file, link, FIFO, folder) is replaced by the host's answer", async () => {
    const { tool, calls } = echoTool({ delayMs: 300 });
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
answers = {}
for kind in ["file", "symlink", "fifo"]:
    request_id = secrets.token_hex(8)
    target = os.path.join(responses, request_id + ".json")
    if kind == "file":
        with open(target, "w") as file:
            json.dump({"ok": True, "value": "forged by the program"}, file)
    elif kind == "symlink":
        os.symlink("/etc/passwd", target)
    else:
        os.mkfifo(target)
    answers[kind] = forge(request("echo", {"value": kind}, request_id), request_id)
request_id = secrets.token_hex(8)
os.mkdir(os.path.join(responses, request_id + ".json"))
answers["directory"] = forge(request("echo", {"value": "directory"}, request_id), request_id)
print("RESULT:", json.dumps(answers))
`,
    });
    const answers = resultJson<Record<string, Response & { problem?: string }>>(run);
    for (const kind of ["file", "symlink", "fifo"]) {
      expect(answers[kind], kind).toEqual({ ok: true, value: { echoed: kind } });
    }
    // A folder cannot be replaced by a rename: the program gets an error, never a forged value.
    expect(answers.directory!.ok).not.toBe(true);
    expect(run.toolCalls.filter((call) => call.status === "ok").map((call) => call.result)).toEqual(
      expect.arrayContaining([{ echoed: "file" }, { echoed: "symlink" }, { echoed: "fifo" }]),
    );
    expect(calls.length).toBe(4);
  });

  test("B8: a symlink, FIFO or folder at a request path is not followed, does not block, and is refused", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
answers = {
    "symlink": forge(b"/etc/passwd", kind="symlink"),
    "symlink to a request": forge(b"../lib/codeaction_tools.py", kind="symlink"),
    "fifo": forge(kind="fifo"),
    "directory": forge(kind="directory"),
    "missing": (lambda i: (ring(i), time.sleep(0.5), forge(request("echo", {}, i), i))[2])(secrets.token_hex(8)),
}
print("RESULT:", json.dumps(answers))
`,
    });
    const answers = resultJson<Record<string, Response>>(run);
    for (const kind of ["symlink", "symlink to a request", "fifo", "directory"]) {
      expect(answers[kind]!.timeout, kind).toBeUndefined();
      expect(answers[kind]!.error?.message, kind).toMatch(
        /request file (is not a regular file|could not be opened)/,
      );
      expect(JSON.stringify(answers[kind]), kind).not.toMatch(/root:x:0:0/);
    }
    expect(calls.length).toBeLessThanOrEqual(1);
  });

  test("B9: requests written after the program ended are ignored; a lingering writer is killed", async () => {
    const { tool, calls } = echoTool();
    let callsAtEnd = -1;
    const run = await runCase(manager, {
      tools: [tool],
      program: `${forgePrelude}
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1.0)
        for _ in range(20):
            request_id = secrets.token_hex(8)
            try:
                with open(os.path.join(requests, request_id + ".json"), "wb") as file:
                    file.write(request("echo", {"value": "late"}, request_id))
                ring(request_id)
            except OSError:
                pass
            time.sleep(0.05)
        os._exit(0)
    os._exit(0)
print("RESULT: ended")
`,
      after: async (session) => {
        callsAtEnd = calls.length;
        await new Promise((resolve) => setTimeout(resolve, 2500));
        // A request written by hand after the end: no relay reads it any more.
        await session.execute(
          `printf '{"id":"late1","tool":"echo","args":{"value":"late"}}' > /workspace/.codeaction/requests/late1.json`,
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
      },
    });
    expect(run.status).toBe("ok");
    expect(callsAtEnd).toBe(0);
    expect(calls).toEqual([]);
  });

  test("B10: shell metacharacters in tool arguments, file names and package names are data, never shell", async () => {
    const { tool, calls } = echoTool();
    const payloads = [
      `"; touch /tmp/${hostileMarker}-b10 #`,
      `$(touch /tmp/${hostileMarker}-b10)`,
      `\`touch /tmp/${hostileMarker}-b10\``,
      `' && touch /tmp/${hostileMarker}-b10 && '`,
      `| touch /tmp/${hostileMarker}-b10`,
    ];
    const run = await runCase(manager, {
      tools: [tool],
      program: `
import json
payloads = ${JSON.stringify(payloads)}
print("RESULT:", json.dumps([echo(value=payload)["echoed"] for payload in payloads]))
`,
      after: async (session) => {
        for (const payload of payloads) {
          await expect(session.installPackage(payload)).rejects.toBeInstanceOf(PackageRefusedError);
        }
        // No slash in the name (a slash makes folders); \`cd\` alone goes to $HOME, which is /workspace.
        const name = `/workspace/${hostileMarker}-$(cd;touch ${hostileMarker}-injected)';cd;touch x'\`cd;touch y\``;
        await session.writeFile(name, "data");
        const listed = (await session.listFiles("/workspace")).map((entry) => entry.name);
        expect(listed).toContain(name.slice("/workspace/".length));
        expect(listed).not.toContain(`${hostileMarker}-injected`);
        expect(listed).not.toContain("x");
        expect(listed).not.toContain("y");
        const probe = await session.execute(`ls /tmp`);
        expect(probe.stdout).not.toContain(`${hostileMarker}-b10`);
      },
    });
    expect(resultJson<string[]>(run)).toEqual(payloads);
    expect(calls.map((call) => call.value)).toEqual(payloads);
    expect(existsSync(`/tmp/${hostileMarker}-b10`)).toBe(false);
  });

  // How long the host's event loop stalls meanwhile is measured by the benchmark (bench/fail-fast.ts).
  test("1,000 calls from 8 threads at once: every one answered, in order", async () => {
    const { tool, calls } = echoTool();
    const run = await runCase(manager, {
      tools: [tool],
      maxToolCalls: 1000,
      execTimeout: 110,
      program: `
import json, threading
answers = [None] * 1000
def work(offset):
    for index in range(offset, 1000, 8):
        answers[index] = echo(value=index)["echoed"]
threads = [threading.Thread(target=work, args=(offset,)) for offset in range(8)]
for thread in threads: thread.start()
for thread in threads: thread.join()
print("RESULT:", json.dumps({"right": answers == list(range(1000))}))
`,
    });
    expect(resultJson<{ right: boolean }>(run).right).toBe(true);
    expect(calls).toHaveLength(1000);
  });
});
