import type { AgentEvent } from "@codeaction/core";
import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** How often a running program reports progress: well inside the 60 s stock clients wait between messages. */
export const progressIntervalMs = 2000;

/** The `_meta` key of a progress notification that carries a line of the program's output. */
export const outputMetaKey = "codeaction/output";

type ProgramOutputEvent = Extract<AgentEvent, { type: "program-output" }>;

/** A running program's progress reports: the ticks, its output lines, and the end of both. */
export type RunProgress = {
  /** A `program-output` event of the run: sent at once as a progress notification. */
  output(event: ProgramOutputEvent): void;
  stop(): void;
};

/**
 * Sends `notifications/progress` for `progressToken` while a program runs: every `intervalMs` a
 * tick (progress: seconds so far; total: the time limit), so a client that resets its request
 * timeout on progress (the SDK's `resetTimeoutOnProgress`) waits for programs longer than its
 * timeout; and each line the program writes, as it comes (`message` "stdout: <line>", `_meta`
 * {"codeaction/output": {stream, line, cut?}}). The lines are already bounded per run by the runner
 * (2000 lines or 256 KiB, then one "output cut" line). Sends are never awaited, so a slow client
 * never slows the program; a failed send (the client went away) stops nothing else. `progress`
 * grows with every notification, as the specification asks.
 */
export function reportRunProgress(options: {
  progressToken: string | number;
  execTimeout: number;
  send: (notification: ServerNotification) => Promise<void>;
  intervalMs?: number;
}): RunProgress {
  const started = performance.now();
  let last = 0;
  let stopped = false;
  const send = (message: string, meta?: Record<string, unknown>) => {
    const seconds = Math.round(performance.now() - started) / 1000;
    last = Math.max(seconds, Math.round((last + 0.001) * 1000) / 1000);
    void options
      .send({
        method: "notifications/progress",
        params: {
          progressToken: options.progressToken,
          progress: last,
          total: options.execTimeout,
          message,
          ...(meta ? { _meta: meta } : {}),
        },
      })
      .catch(() => undefined);
  };
  const timer = setInterval(() => {
    const seconds = Math.round((performance.now() - started) / 1000);
    send(`the program is running: ${seconds} s of at most ${options.execTimeout} s`);
  }, options.intervalMs ?? progressIntervalMs);
  timer.unref();
  return {
    output(event) {
      if (stopped) return;
      const output = { stream: event.stream, line: event.line, ...(event.cut ? { cut: true } : {}) };
      send(event.cut ? event.line : `${event.stream}: ${event.line}`, { [outputMetaKey]: output });
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
