import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";

/** How often a running program reports progress: well inside the 60 s stock clients wait between messages. */
export const progressIntervalMs = 2000;

/**
 * Sends `notifications/progress` for `progressToken` every `intervalMs` while a program runs
 * (progress: seconds so far; total: the time limit), so a client that resets its request timeout on
 * progress (the SDK's `resetTimeoutOnProgress`) waits for programs longer than its timeout. Returns
 * the function that stops it. A failed send (the client went away) stops nothing else.
 */
export function reportRunProgress(options: {
  progressToken: string | number;
  execTimeout: number;
  send: (notification: ServerNotification) => Promise<void>;
  intervalMs?: number;
}): () => void {
  const started = performance.now();
  const timer = setInterval(() => {
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    void options
      .send({
        method: "notifications/progress",
        params: {
          progressToken: options.progressToken,
          progress: seconds,
          total: options.execTimeout,
          message: `the program is running: ${Math.round(seconds)} s of at most ${options.execTimeout} s`,
        },
      })
      .catch(() => undefined);
  }, options.intervalMs ?? progressIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
