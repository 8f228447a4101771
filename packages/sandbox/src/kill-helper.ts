import { PassThrough } from "node:stream";
import type Dockerode from "dockerode";
import type { Logger } from "pino";
import { execMarkerName } from "./config.ts";
import { Demultiplexer } from "./demultiplex.ts";

/**
 * A bash program that uses builtins only (no fork): it still works when a fork bomb has used every
 * pid the container may have. It reads requests on stdin, one a line:
 * - `kill <id>`: freezes every process of the user (`kill -STOP -1`), SIGKILLs every
 *   process whose environment holds CODEACTION_EXEC_ID=<id> (the marker each command gets; setsid,
 *   nohup and double forks inherit it) and every process that carries no marker at all or hides its
 *   environment (`env -i`, a non-dumpable process: it escaped its command, so it is killed too),
 *   sparing the container's own process (PID 1, the sandbox's init, which never forks: see
 *   init.ts), this helper, zombies and processes of other running commands (another marker).
 *   Repeats until a frozen scan finds none, then thaws the others (`kill -CONT -1`); answers
 *   `killed <count> survivors <count>`.
 * - `oom`: the memory cgroup's oom_kill counter (`oom <n>` or `oom unknown`).
 * - `ping`: `pong`.
 */
export const killHelperScript = `
set +e
# $1: the marker entry to kill. PID 1 (the sandbox's init) and this helper are spared.
marker_scan() {
  found=()
  local dir pid entry statline state mine other
  for dir in /proc/[0-9]*; do
    pid=\${dir#/proc/}
    [ "$pid" = "$$" ] || [ "$pid" = 1 ] && continue
    statline=""
    { read -r statline < "$dir/stat"; } 2>/dev/null
    [ -z "$statline" ] && continue
    state=\${statline##*) }
    [ "\${state:0:1}" = Z ] && continue
    mine=0
    other=0
    while IFS= read -r -d '' entry; do
      if [ "$entry" = "$1" ]; then mine=1; break; fi
      case "$entry" in ${execMarkerName}=*) other=1 ;; esac
    done 2>/dev/null < "$dir/environ"
    if [ $mine = 1 ] || [ $other = 0 ]; then found+=("$pid"); fi
  done
}
kill_marker() {
  local round total=0 marker="$1"
  # Freeze every process of this user (kill -1 spares PID 1 and the helper itself): a stopped process
  # cannot fork and takes no CPU, so a fork bomb stands still while it is scanned. Then SIGKILL the
  # marked ones, and repeat until a scan of the frozen container finds none. Then thaw the rest.
  for round in {1..60}; do
    kill -STOP -1 2>/dev/null
    marker_scan "$marker"
    if [ \${#found[@]} -eq 0 ]; then
      kill -CONT -1 2>/dev/null
      echo "killed $total survivors 0"
      return
    fi
    kill -KILL "\${found[@]}" 2>/dev/null
    total=$((total + \${#found[@]}))
    read -r -t 0.01 _ignored
  done
  marker_scan "$marker"
  kill -CONT -1 2>/dev/null
  echo "killed $total survivors \${#found[@]}"
}
oom_count() {
  local file key value
  for file in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
    if [ -r "$file" ]; then
      while read -r key value; do
        if [ "$key" = oom_kill ]; then echo "oom $value"; return; fi
      done < "$file"
    fi
  done
  echo "oom unknown"
}
echo "ready $$"
while read -r request id rest; do
  case "$request" in
    kill) kill_marker "${execMarkerName}=$id" ;;
    oom) oom_count ;;
    ping) echo pong ;;
    *) echo "unknown $request" ;;
  esac
done
`;

/**
 * One long-lived exec per container running killHelperScript, started before any code runs, so the
 * kill needs no new process. Requests are answered in order. If the code killed the helper (it runs
 * as the same user), `request` rejects and the session falls back to a fresh exec, then to recycling.
 */
export class KillHelper {
  private readonly stream: NodeJS.ReadWriteStream;
  private readonly pending: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  private buffered = "";
  private closedError: Error | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(stream: NodeJS.ReadWriteStream, logger?: Logger) {
    this.stream = stream;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stream.pipe(new Demultiplexer(stdout, stderr));
    stderr.resume();
    stdout.on("data", (chunk: Buffer) => {
      this.buffered += chunk.toString("utf8");
      let newline = this.buffered.indexOf("\n");
      while (newline >= 0) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        this.pending.shift()?.resolve(line);
        newline = this.buffered.indexOf("\n");
      }
    });
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

  private fail(error: Error): void {
    this.closedError ??= error;
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
  static async start(container: Dockerode.Container, options: { logger?: Logger } = {}): Promise<KillHelper> {
    const exec = await container.exec({
      Cmd: ["bash", "-c", killHelperScript, "codeaction-kill-helper"],
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
   * killHelperScript); returns how many were killed and how many survive.
   */
  async killMarked(id: string): Promise<{ killed: number; survivors: number }> {
    const answer = await this.request(`kill ${id}`, {
      timeoutMs: 15_000,
    });
    const match = /^killed (\d+) survivors (\d+)$/.exec(answer);
    if (!match) throw new Error(`unexpected kill helper answer: ${JSON.stringify(answer)}`);
    return { killed: Number(match[1]), survivors: Number(match[2]) };
  }

  /** The memory cgroup's oom_kill counter, or undefined when the kernel does not expose one. */
  async oomKillCount(): Promise<number | undefined> {
    const answer = await this.request("oom");
    const match = /^oom (\d+)$/.exec(answer);
    return match ? Number(match[1]) : undefined;
  }

  close(): void {
    this.fail(new Error("the kill helper was closed"));
    try {
      this.stream.end();
      (this.stream as unknown as { destroy?: () => void }).destroy?.();
    } catch {
      // already closed
    }
  }
}
