import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export type StdioProcessOptions = {
  command: string;
  args?: string[];
  /** Added to the SDK's safe default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env?: Record<string, string>;
  cwd?: string;
  /** Called with each line the server writes to stderr. */
  onStderrLine?: (line: string) => void;
};

export type ProcessExit = { exitCode: number | null; signal: NodeJS.Signals | null };

const stderrTailLimit = 4096;
const gracefulExitMs = 2000;
const terminateWaitMs = 1000;
const stdioDrainMs = 300;

/**
 * The MCP stdio client transport, with the server in its own process group so that `close()` ends
 * the server and everything it started (an `npx` or `sh -c` wrapper included), and with the tail
 * of its stderr and its exit status kept for error messages. Same framing as the SDK's
 * StdioClientTransport (newline-delimited JSON-RPC, the SDK's ReadBuffer).
 */
export class StdioProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioProcessOptions;
  readonly #readBuffer = new ReadBuffer();
  #child: ChildProcessWithoutNullStreams | undefined;
  #stderrTail = "";
  #stderrPartialLine = "";
  #exit: ProcessExit | undefined;
  #exited: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: StdioProcessOptions) {
    this.#options = options;
  }

  /** The server's process id (also its process group id), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The last few KB the server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** How the server process ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }

  start(): Promise<void> {
    if (this.#child) throw new Error("StdioProcessTransport was already started");
    const child = spawn(this.#options.command, this.#options.args ?? [], {
      env: { ...getDefaultEnvironment(), ...this.#options.env },
      cwd: this.#options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      // Its own process group: close() signals the whole group.
      detached: true,
    });
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.once("exit", (exitCode, signal) => {
        this.#exit = { exitCode, signal };
        resolve();
      });
    });
    child.stdout.on("data", (chunk: Buffer) => {
      try {
        this.#readBuffer.append(chunk);
        for (
          let message = this.#readBuffer.readMessage();
          message;
          message = this.#readBuffer.readMessage()
        ) {
          this.onmessage?.(message);
        }
      } catch (error) {
        this.onerror?.(error as Error);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => this.#recordStderr(text));
    child.stdin.on("error", (error) => this.onerror?.(error));
    child.stdout.on("error", (error) => this.onerror?.(error));
    // "close" comes after the process exited and its stdio ended: every message and all of
    // stderr have been read by then. Something the server started may hold its stdio open after
    // it exited: the server is gone all the same, so report the close shortly after the exit.
    let closed = false;
    const notifyClosed = () => {
      if (closed) return;
      closed = true;
      this.#flushStderr();
      this.onclose?.();
    };
    child.once("close", notifyClosed);
    child.once("exit", () => setTimeout(notifyClosed, stdioDrainMs).unref());
    return new Promise((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (error) => {
        this.#exit ??= { exitCode: null, signal: null };
        reject(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || stdin.destroyed || this.#exit)
      return Promise.reject(new Error("the server process is not running"));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Ends stdin, waits for the server to exit, then SIGTERM and SIGKILL its whole process group. */
  close(): Promise<void> {
    this.#closing ??= this.#terminate();
    return this.#closing;
  }

  async #terminate(): Promise<void> {
    const child = this.#child;
    if (!child?.pid) return;
    const groupId = child.pid;
    child.stdin.end();
    await Promise.race([this.#exited, sleep(gracefulExitMs, undefined, { ref: false })]);
    // The leader may be gone while something it started still runs in its group.
    if (signalGroup(groupId, "SIGTERM") && !(await groupEnded(groupId, terminateWaitMs))) {
      signalGroup(groupId, "SIGKILL");
      await groupEnded(groupId, terminateWaitMs);
    }
    await this.#exited;
    this.#readBuffer.clear();
  }

  #recordStderr(text: string): void {
    this.#stderrTail = (this.#stderrTail + text).slice(-stderrTailLimit);
    const lines = (this.#stderrPartialLine + text).split("\n");
    this.#stderrPartialLine = lines.pop() ?? "";
    for (const line of lines) this.#options.onStderrLine?.(line);
  }

  #flushStderr(): void {
    if (this.#stderrPartialLine) this.#options.onStderrLine?.(this.#stderrPartialLine);
    this.#stderrPartialLine = "";
  }
}

/** Sends a signal to a process group; false when the group has no process left. */
function signalGroup(groupId: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-groupId, signal);
    return true;
  } catch {
    return false;
  }
}

async function groupEnded(groupId: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!signalGroup(groupId, 0)) return true;
    await sleep(25);
  }
  return !signalGroup(groupId, 0);
}
