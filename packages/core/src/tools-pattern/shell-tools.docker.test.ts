import { SandboxManager, type SandboxSession } from "@codeaction/sandbox";
import { HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ScriptedChatModel, type ScriptedReply } from "../testing/index.ts";
import type { AgentEvent, AgentResult } from "../types.ts";
import { createToolsRunner } from "./runner.ts";
import { createShellTools } from "./shell-tools.ts";

// Shell mode against real containers: a scripted model drives the five tools over one session.

const fibProgram = `from pathlib import Path

def fib(count):
    a, b = 0, 1
    for _ in range(count):
        yield a
        a, b = b, a + b

line = " ".join(str(number) for number in fib(10))
Path("/workspace/out").mkdir(exist_ok=True)
Path("/workspace/out/fib.txt").write_text(line + "\\n")
print(line)
`;

let manager: SandboxManager;
let session: SandboxSession | undefined;

beforeAll(async () => {
  manager = new SandboxManager({ network: "none", timeout: 30 });
  await manager.ready();
});
afterEach(async () => {
  await session?.close();
  session = undefined;
});
afterAll(async () => {
  await manager?.close();
});

async function run(
  replies: ScriptedReply[],
  options: { outputCap?: number } = {},
): Promise<{ model: ScriptedChatModel; result: AgentResult; events: AgentEvent[]; session: SandboxSession }> {
  session = await manager.createSession({ deadlineSeconds: 300 });
  const model = new ScriptedChatModel(replies);
  const runner = createToolsRunner({ model, tools: createShellTools(session, options) });
  const stream = runner.stream([new HumanMessage("Work in the sandbox.")], "shell-mode");
  const events: AgentEvent[] = [];
  for (;;) {
    const next = await stream.next();
    if (next.done) return { model, result: next.value, events, session };
    events.push(next.value);
  }
}

/** The tool message the model received before its `callNumber`-th reply (1-based). */
function toolResultBefore(model: ScriptedChatModel, callNumber: number): string {
  const message = model.calls[callNumber - 1]?.messages.at(-1) as ToolMessage | undefined;
  expect(message?.type).toBe("tool");
  return String(message?.content);
}

describe("shell mode", () => {
  it("runs the seed's shell-agent session: write fib.py, run it, read the output, on a read-only root", async () => {
    const { model, result, session } = await run([
      {
        toolCalls: [
          { name: "sandbox_write_file", args: { path: "/workspace/scripts/fib.py", content: fibProgram } },
        ],
      },
      { toolCalls: [{ name: "sandbox_exec", args: { command: "python3 scripts/fib.py" } }] },
      { toolCalls: [{ name: "sandbox_read_file", args: { path: "out/fib.txt" } }] },
      { toolCalls: [{ name: "sandbox_list_files", args: {} }] },
      { toolCalls: [{ name: "sandbox_exec", args: { command: "touch /usr/escape" } }] },
      "The first ten Fibonacci numbers are 0 1 1 2 3 5 8 13 21 34.",
    ]);

    const info = await session.inspect();
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(toolResultBefore(model, 2)).toBe(
      `Wrote ${Buffer.byteLength(fibProgram)} bytes to /workspace/scripts/fib.py.`,
    );
    expect(toolResultBefore(model, 3)).toMatch(
      /^exit code: 0 \([\d.]+ s\)\nstdout:\n0 1 1 2 3 5 8 13 21 34\nstderr: \(empty\)$/,
    );
    expect(toolResultBefore(model, 4)).toBe("0 1 1 2 3 5 8 13 21 34\n");
    expect(toolResultBefore(model, 5)).toBe("/workspace:\ndirectory  out/\ndirectory  scripts/");
    expect(toolResultBefore(model, 6)).toMatch(/^exit code: 1 .*\nstderr:\n.*Read-only file system/s);
    expect(result.toolCalls.map((call) => call.status)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(result.answer).toContain("0 1 1 2 3 5 8 13 21 34");
  });

  it("kills an endless command at its timeout with the partial output, and the next command works", async () => {
    const { model, session } = await run([
      {
        toolCalls: [
          {
            name: "sandbox_exec",
            args: { command: "echo started; sleep 4242 & while true; do :; done", timeout: 2 },
          },
        ],
      },
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo next" } }] },
      "done",
    ]);

    const killed = toolResultBefore(model, 2);
    expect(killed).toMatch(
      /^exit code: none: timed out after 2 seconds; the command and every process it started/,
    );
    expect(killed).toContain("stdout:\nstarted");
    expect(killed).toContain("Command timed out after 2 seconds; its processes were killed");
    expect(killed).not.toContain("/workspace is empty again");

    expect(toolResultBefore(model, 3)).toMatch(/^exit code: 0 .*\nstdout:\nnext\n/s);
    const processes = await session.execute(
      "for entry in /proc/[0-9]*; do tr '\\0' ' ' < $entry/cmdline 2>/dev/null; echo; done",
    );
    expect(processes.exitCode).toBe(0);
    expect(processes.stdout).toContain("/proc/[0-9]*"); // the listing saw itself: it works
    expect(processes.stdout).not.toContain("sleep 4242");
    expect(processes.stdout).not.toContain("while true");
  });

  it("hands a 50 MB output to the model as at most the cap, with a note of the cut", async () => {
    const { model } = await run([
      { toolCalls: [{ name: "sandbox_exec", args: { command: "head -c 52428800 /dev/zero | tr '\\0' a" } }] },
      "done",
    ]);
    const content = toolResultBefore(model, 2);
    const stdout = content.split("\nstdout:\n")[1]?.split("\n")[0] ?? "";
    expect(stdout).toBe("a".repeat(16 * 1024));
    // The note says exactly how much was cut: the session counts every byte it drops.
    expect(content).toContain(`[stdout cut: showing the first 16384 bytes, ${52428800 - 16384} bytes cut.`);
    expect(Buffer.byteLength(content)).toBeLessThan(16 * 1024 + 1024);
  });

  it("honours a smaller outputCap for command output and files", async () => {
    const { model } = await run(
      [
        {
          toolCalls: [{ name: "sandbox_exec", args: { command: "seq 1 1000 | tee /workspace/numbers.txt" } }],
        },
        { toolCalls: [{ name: "sandbox_read_file", args: { path: "/workspace/numbers.txt" } }] },
        "done",
      ],
      { outputCap: 100 },
    );
    const total = Buffer.byteLength(Array.from({ length: 1000 }, (_, index) => `${index + 1}\n`).join(""));
    expect(toolResultBefore(model, 2)).toContain(
      `[stdout cut: showing the first 100 bytes, ${total - 100} bytes cut.`,
    );
    const file = toolResultBefore(model, 3);
    expect(file.startsWith("1\n2\n3\n")).toBe(true);
    expect(file).toContain(
      `[/workspace/numbers.txt cut: showing the first 100 bytes, ${total - 100} bytes cut.`,
    );
  });

  it("answers a package install without network, and refuses a package name that is a command", async () => {
    const { model, result, session } = await run([
      { toolCalls: [{ name: "sandbox_install_package", args: { package: "requests" } }] },
      { toolCalls: [{ name: "sandbox_install_package", args: { package: "x; touch /workspace/pwned" } }] },
      "done",
    ]);
    expect(toolResultBefore(model, 2)).toMatch(
      /^Could not install requests \(exit code 1\)\.\nstderr:\n.*no network/s,
    );
    expect(toolResultBefore(model, 3)).toMatch(
      /^Error: The package "x; touch \/workspace\/pwned" was refused/,
    );
    expect(result.toolCalls.map((call) => call.status)).toEqual(["ok", "error"]);
    const listing = await session.execute("ls -A /workspace");
    expect(listing.stdout).not.toContain("pwned");
  });

  it("sends bad input and refused paths back to the model, and the loop goes on", async () => {
    const { model, result } = await run([
      { toolCalls: [{ name: "sandbox_exec", args: { cmd: "ls" } }] },
      { toolCalls: [{ name: "sandbox_write_file", args: { path: "/etc/passwd", content: "x" } }] },
      { toolCalls: [{ name: "sandbox_read_file", args: { path: "../etc/shadow" } }] },
      { toolCalls: [{ name: "sandbox_exec", args: { command: "echo still here", timeout: 999 } }] },
      "done",
    ]);
    expect(toolResultBefore(model, 2)).toBe(
      "Error: Invalid input for tool 'sandbox_exec': cmd: unknown key; the keys are: command, timeout. Call it again with arguments that match its schema.",
    );
    expect(toolResultBefore(model, 3)).toMatch(/^Error: The path "\/etc\/passwd" was refused/);
    expect(toolResultBefore(model, 4)).toMatch(/^Error: The path "\.\.\/etc\/shadow" was refused/);
    expect(toolResultBefore(model, 5)).toContain("stdout:\nstill here");
    expect(toolResultBefore(model, 5)).toContain(
      "(timeout lowered from 999 to the sandbox's maximum of 30 seconds)",
    );
    expect(result.toolCalls.map((call) => call.status)).toEqual(["invalid", "error", "error", "ok"]);
  });

  it("tells the model the sandbox's facts in the tool descriptions", async () => {
    session = await manager.createSession({ deadlineSeconds: 300 });
    const tools = createShellTools(session);
    expect(tools.map((tool) => tool.name)).toEqual([
      "sandbox_exec",
      "sandbox_read_file",
      "sandbox_write_file",
      "sandbox_list_files",
      "sandbox_install_package",
    ]);
    const exec = tools[0]?.description ?? "";
    expect(exec).toContain("/workspace is writable");
    expect(exec).toContain("There is no network");
    expect(exec).toContain(
      "killed, with every process it started, after `timeout` seconds (default and maximum 30)",
    );
    expect(tools[4]?.description).toContain("The sandbox has no network");
  });
});
