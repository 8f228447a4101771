import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { encodeFrame, encodeHeaderFrame, FrameDecoder, hostFrame } from "./frames.ts";
import { type BridgeOptions, type RelayProcess, runBridge } from "./host-bridge.ts";

// The host against a relay that lies: frames written by hand into a fake exec's stdout. The
// program shares the relay's uid, so any of these could be forged; none may crash the host or
// end in a success.

function fakeRelay() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const received: Array<{ type: string; payload: string }> = [];
  const decoder = new FrameDecoder({ S: 1 << 24, A: 1 << 24, K: 0 });
  stdin.on("data", (chunk: Buffer) => {
    for (const frame of decoder.push(chunk))
      received.push({ type: frame.type, payload: frame.payload.toString() });
  });
  let exitCode: number | null = null;
  const exit = new Promise<{ exitCode: number | null }>((resolve) =>
    stdout.on("end", () => resolve({ exitCode })),
  );
  const process: RelayProcess = { stdin, stdout, stderr, exit };
  return {
    process,
    received,
    stderr,
    send: (frame: Buffer) => stdout.write(frame),
    end: (code: number | null = 0) => {
      exitCode = code;
      stdout.end();
      stderr.end();
    },
  };
}

const exitFrame = (exitCode = 0) =>
  encodeFrame(
    "X",
    JSON.stringify({
      exitCode,
      signal: null,
      killed: false,
      stdoutBytes: 0,
      stderrBytes: 0,
      requests: 0,
      notices: 0,
    }),
  );

function options(relay: ReturnType<typeof fakeRelay>, extra: Partial<BridgeOptions> = {}): BridgeOptions {
  return {
    process: relay.process,
    program: "print(1)",
    toolsModule: "",
    tools: [],
    runId: "run-frames",
    execTimeout: 30,
    maxToolCalls: 5,
    ...extra,
  };
}

describe("frames the host refuses", () => {
  test("an unknown frame type ends the run as a failure", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.send(encodeFrame("Z", "hello"));
    const result = await outcome;
    expect(result.failure).toContain('unknown frame type "Z"');
    expect(result.exit).toBeUndefined();
    expect(relay.received.map((frame) => frame.type)).toEqual([hostFrame.start, hostFrame.kill]);
  });

  test("a frame claiming 1 GB fails at its header, before any payload is buffered", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    const header = Buffer.alloc(5);
    header.write("O", 0);
    header.writeUInt32BE(1024 * 1024 * 1024, 1);
    relay.send(header);
    const result = await outcome;
    expect(result.failure).toMatch(/exceeds/);
  });

  test("the stream ending without an exit report is a failure that names the relay's stderr", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.stderr.write("Traceback: relay crashed\n");
    relay.send(encodeFrame("O", "RESULT: 42\n"));
    relay.end(1);
    const result = await outcome;
    expect(result.failure).toContain("ended before it reported the program's exit");
    expect(result.failure).toContain("relay crashed");
    expect(result.stdout).toBe("RESULT: 42\n");
  });

  test("a request frame with an id outside the grammar is a protocol failure", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.send(encodeHeaderFrame("Q", { id: "../../etc/passwd" }, "{}"));
    expect((await outcome).failure).toContain("invalid id");
  });

  test("a malformed exit report is a failure, not a success", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.send(encodeFrame("X", JSON.stringify({ exitCode: "0" })));
    const result = await outcome;
    expect(result.failure).toContain("exitCode");
    expect(result.exit).toBeUndefined();
  });

  test("a fatal frame carries the relay's message", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.send(encodeFrame("F", JSON.stringify({ message: "could not create the bridge folder" })));
    expect((await outcome).failure).toBe("the relay failed: could not create the bridge folder");
  });

  test("output frames past the cap are cut and flagged", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay, { maxOutputBytes: 10 }));
    relay.send(encodeFrame("O", "0123456789abcdef"));
    relay.send(encodeFrame("O", "more"));
    relay.send(exitFrame());
    const result = await outcome;
    expect(result.stdout).toBe("0123456789");
    expect(result.truncated).toBe(true);
  });
});

describe("requests through forged frames", () => {
  test("answers go out once per id; the call after the cap never reaches the tool", async () => {
    const relay = fakeRelay();
    const invoked: unknown[] = [];
    const tool: ToolSpec = {
      name: "t",
      description: "",
      origin: "tool",
      inputSchema: { type: "object" },
      invoke: async (args) => {
        invoked.push(args);
        return "ok";
      },
    };
    const outcome = runBridge(options(relay, { tools: [tool], maxToolCalls: 2 }));
    for (const id of ["a", "b", "c"]) {
      relay.send(encodeHeaderFrame("Q", { id }, JSON.stringify({ id, tool: "t", args: { id } })));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    relay.send(exitFrame());
    const result = await outcome;
    expect(invoked).toEqual([{ id: "a" }, { id: "b" }]);
    expect(result.limitHit).toBe(true);
    const answers = relay.received
      .filter((frame) => frame.type === hostFrame.answer)
      .map((frame) => frame.payload);
    expect(answers).toHaveLength(3);
    expect(answers.find((answer) => answer.startsWith('{"id":"c"}'))).toContain("ToolCallLimitExceeded");
  });

  test("nothing is answered after the program's exit", async () => {
    const relay = fakeRelay();
    const outcome = runBridge(options(relay));
    relay.send(exitFrame());
    relay.send(encodeHeaderFrame("Q", { id: "late" }, JSON.stringify({ id: "late", tool: "t", args: {} })));
    const result = await outcome;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(result.toolCalls).toEqual([]);
    expect(relay.received.some((frame) => frame.type === hostFrame.answer)).toBe(false);
  });
});
