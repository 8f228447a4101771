import { PassThrough } from "node:stream";
import type { Logger } from "pino";
import { execMarkerName } from "../config.ts";
import type { EngineContainer } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { Demultiplexer } from "./demultiplex.ts";

/**
 * A Python program that forks nothing (it still works when a fork bomb has used every pid the
 * container may have). Its first statement makes it non-dumpable: the code runs as the same uid,
 * and a dumpable helper would let it open `/proc/<helper>/fd/1` to flood the host or forge answers,
 * or `/proc/<helper>/fd/0` to read the requests. It reads requests on stdin, one a line:
 * - `kill <id>`: freezes every process of the user (`kill(-1, SIGSTOP)`), SIGKILLs
 *   every process whose environment holds CODEACTION_EXEC_ID=<id> (the marker each command gets;
 *   setsid, nohup and double forks inherit it) and every process that carries no marker at all or
 *   hides its environment (`env -i`, a non-dumpable process: it escaped its command, so it is
 *   killed too), sparing the container's own process (PID 1, the sandbox's init, which never forks: see
 *   init.ts), this helper, zombies and processes of other running commands (another marker). Repeats
 *   until a frozen scan finds none, then thaws the others (`kill(-1, SIGCONT)`); answers
 *   `killed <count> survivors <count>`.
 * - `oom`: the memory cgroup's oom_kill counter (`oom <n>` or `oom unknown`).
 * - `ping`: `pong`.
 */
export const killHelperSource = String.raw`import ctypes
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
import os, sys, time
# The signal numbers without the signal module (its enum import is a third of this helper's start-up).
try:
    from _signal import SIGCONT, SIGKILL, SIGSTOP
except ImportError:
    from signal import SIGCONT, SIGKILL, SIGSTOP
MARKER = b"${execMarkerName}="
def say(line):
    os.write(1, line.encode() + b"\n")
def scan(marker, infra):
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == os.getpid() or pid in infra:
            continue
        try:
            with open("/proc/%d/stat" % pid, "rb") as file:
                stat = file.read()
            if stat[stat.rindex(b")") + 2 :][:1] in (b"Z", b"X"):
                continue
        except (OSError, ValueError):
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as file:
                entries = file.read().split(b"\0")
        except OSError:
            entries = []
        if marker in entries or not any(entry.startswith(MARKER) for entry in entries):
            found.append(pid)
    return found
def kill_marked(marker, infra):
    total = 0
    for _ in range(60):
        os.kill(-1, SIGSTOP)
        found = scan(marker, infra)
        if not found:
            os.kill(-1, SIGCONT)
            return say("killed %d survivors 0" % total)
        for pid in found:
            try:
                os.kill(pid, SIGKILL)
            except OSError:
                pass
        total += len(found)
        time.sleep(0.01)
    found = scan(marker, infra)
    os.kill(-1, SIGCONT)
    say("killed %d survivors %d" % (total, len(found)))
def oom_count():
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as file:
                for line in file:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return say("oom %d" % int(value))
        except (OSError, ValueError):
            pass
    say("oom unknown")
# PID 1 (the sandbox's init) never forks and is the container's own: spared by rule, with this helper.
INFRA = {1}
say("ready %d" % os.getpid())
for raw in sys.stdin.buffer:
    words = raw.decode("ascii", "replace").split()
    request = words[0] if words else ""
    try:
        if request == "kill" and len(words) == 2:
            kill_marked(MARKER + words[1].encode(), INFRA)
        elif request == "oom":
            oom_count()
        elif request == "ping":
            say("pong")
        else:
            say("unknown %s" % request[:40])
    except ProcessLookupError:
        say("killed 0 survivors 0")
    except Exception as error:
        say("failed %s" % type(error).__name__)
`;

/** Longest line the host accepts from the helper; its answers are a few dozen bytes. */
const maxAnswerBytes = 4096;

/**
 * One long-lived exec per container running killHelperSource, started before any code runs, so the
 * kill needs no new process. Requests are answered in order. If the code killed the helper (it runs
 * as the same user), `request` rejects and the session falls back to a fresh exec, then to recycling.
 * Its output is read as hostile: a line over 4096 bytes, an answer nobody asked for or one that does
 * not parse makes it a failed helper (closed; the session starts another or recycles).
 */
export class KillHelper {
  private readonly stream: NodeJS.ReadWriteStream;
  private readonly pending: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  private buffered: Buffer = Buffer.alloc(0);
  private closedError: Error | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(stream: NodeJS.ReadWriteStream, logger?: Logger) {
    this.stream = stream;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stream.pipe(new Demultiplexer(stdout, stderr));
    stderr.resume();
    stdout.on("data", (chunk: Buffer) => this.onOutput(chunk));
    const close = () => this.fail(new Error("the kill helper exited"));
    stdout.on("end", close);
    stream.on("close", close);
    stream.on("error", (error: Error) => this.fail(error));
    this.ready = this.read(10_000)
      .then((first) => {
        const ready = /^ready (\d+)$/.exec(first);
        if (!ready) throw new Error(`the kill helper did not start: ${JSON.stringify(first)}`);
        logger?.debug({ helperPid: ready[1] }, "kill helper ready");
      })
      .catch((error: Error) => {
        this.fail(error);
        throw error;
      });
    this.ready.catch(() => undefined);
    this.queue = this.ready;
  }

  /** Splits the helper's output into lines, scanning each byte once and keeping at most one short line. */
  private onOutput(chunk: Buffer): void {
    if (this.closedError) return;
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      const waiter = this.pending.shift();
      if (this.buffered.length + newline - start > maxAnswerBytes || !waiter) {
        this.malformed(waiter ? "a line over 4096 bytes" : "an answer nobody asked for");
        waiter?.reject(this.closedError ?? new Error("the kill helper failed"));
        return;
      }
      waiter.resolve(Buffer.concat([this.buffered, chunk.subarray(start, newline)]).toString("latin1"));
      this.buffered = Buffer.alloc(0);
      start = newline + 1;
    }
    if (this.buffered.length + chunk.length - start > maxAnswerBytes) {
      this.malformed("a line over 4096 bytes");
      return;
    }
    this.buffered = Buffer.concat([this.buffered, chunk.subarray(start)]);
  }

  /** The helper sent what it never would: treat it as failed, and stop reading it. */
  private malformed(what: string): void {
    this.close(new Error(`the kill helper sent ${what}; it is treated as failed`));
  }

  private fail(error: Error): void {
    this.closedError ??= error;
    this.buffered = Buffer.alloc(0);
    for (const waiter of this.pending.splice(0)) waiter.reject(error);
  }

  get alive(): boolean {
    return this.closedError === undefined;
  }

  /**
   * Resolves once the helper runs and answers (it reports its pid first); rejects if it did not
   * start. Requests wait for it. No program may run before it resolves (the session waits).
   */
  readonly ready: Promise<void>;

  /**
   * Starts a helper and returns as soon as its exec is started: whoever needs it waits for `ready`,
   * so its start overlaps with other work (the read-back of the container, the relay's exec).
   */
  static async start(container: EngineContainer, options: { logger?: Logger } = {}): Promise<KillHelper> {
    const exec = await container.exec({
      Cmd: ["python3", "-I", "-S", "-c", killHelperSource, "codeaction-kill-helper"],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      WorkingDir: "/",
    });
    const stream = (await exec.start({ hijack: true, stdin: true, Tty: false })) as NodeJS.ReadWriteStream;
    // The helper lives as long as the container; it must not keep the host process alive.
    (stream as unknown as { unref?: () => void }).unref?.();
    return new KillHelper(stream, options.logger);
  }

  private read(timeoutMs: number): Promise<string> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = this.pending.indexOf(waiter);
        if (index >= 0) this.pending.splice(index, 1);
        reject(new Error(`the kill helper did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.pending.push(waiter);
    });
  }

  /** Sends one request line and waits for its one-line answer. */
  request(line: string, options: { timeoutMs?: number } = {}): Promise<string> {
    const run = async () => {
      if (this.closedError) throw this.closedError;
      const answer = this.read(options.timeoutMs ?? 10_000);
      this.stream.write(`${line}\n`);
      return answer;
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Kills every process carrying the marker `id`, and every process that escaped its marker (see
   * killHelperSource); returns how many were killed and how many survive.
   */
  async killMarked(id: string): Promise<{ killed: number; survivors: number }> {
    const answer = await this.request(`kill ${id}`, {
      timeoutMs: 15_000,
    });
    const match = /^killed (\d{1,9}) survivors (\d{1,9})$/.exec(answer);
    if (!match) {
      const error = new Error(`unexpected kill helper answer: ${JSON.stringify(answer.slice(0, 80))}`);
      this.close(error);
      throw error;
    }
    return { killed: Number(match[1]), survivors: Number(match[2]) };
  }

  /** The memory cgroup's oom_kill counter, or undefined when the kernel does not expose one. */
  async oomKillCount(): Promise<number | undefined> {
    const answer = await this.request("oom");
    const match = /^oom (\d{1,15})$/.exec(answer);
    if (match) return Number(match[1]);
    if (answer !== "oom unknown")
      this.close(new Error(`unexpected kill helper answer: ${JSON.stringify(answer.slice(0, 80))}`));
    return undefined;
  }

  close(reason = new Error("the kill helper was closed")): void {
    this.fail(reason);
    try {
      this.stream.end();
      destroyStream(this.stream);
    } catch {
      // already closed
    }
  }
}
