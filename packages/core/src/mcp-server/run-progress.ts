import type { ServerNotification } from "@modelcontextprotocol/sdk/types.js";
import type { AgentEvent } from "../types.ts";

/** How often a running program reports progress: well inside the 60 s stock clients wait between messages. */
export const progressIntervalMs = 2000;

/** The `_meta` key of a progress notification that carries a line of the program's output. */
export const outputMetaKey = "codeaction/output";

/** How long the result may wait for the client to have handled the run's notifications. */
export const deliveryTimeoutMs = 2000;

/**
 * Bytes of output-line notifications one run may send (as JSON): a client that never reads holds
 * them in this server's buffers beside the reply (reply-bounds.ts: about 256 Ki characters), so
 * they count in the reply's budget. 768 KiB carries the runner's 2000 lines when they are short
 * (about 200 bytes a notification), and stops the lines that JSON escapes six-fold (control bytes:
 * 256 KiB of them made about 3 MiB of notifications a run). Past it, one notification says the live
 * output stops and the rest of the output comes in the result; ticks go on.
 */
export const maxOutputNotificationBytes = 768 * 1024;

type ProgramOutputEvent = Extract<AgentEvent, { type: "program-output" }>;

/** A running program's progress reports: the ticks, its output lines, and the end of both. */
export type RunProgress = {
  /** A `program-output` event of the run: sent at once as a progress notification. */
  output(event: ProgramOutputEvent): void;
  /**
   * Stops the ticks and waits until the client has handled every notification sent: their writes,
   * then `confirm` (a round trip through the client), at most `deliveryTimeoutMs` in all. The
   * result is sent after this. Never throws.
   */
  stop(): Promise<void>;
};

/**
 * Sends `notifications/progress` for `progressToken` while a program runs: every `intervalMs` a
 * tick (progress: seconds so far; total: the time limit), so a client that resets its request
 * timeout on progress (the SDK's `resetTimeoutOnProgress`) waits for programs longer than its
 * timeout; and each line the program writes, as it comes (`message` "stdout: <line>", `_meta`
 * {"codeaction/output": {stream, line, cut?}}). The lines are already bounded per run by the runner
 * (2000 lines or 256 KiB, then one "output cut" line). Sends are not awaited while the program
 * runs, so a slow client never slows the program; a failed send (the client went away) stops
 * nothing else. `progress` grows with every notification, as the specification asks.
 *
 * Why `stop()` waits: the official SDK client handles a notification a microtask after it reads
 * it but a response at once, and drops the request's progress handler with the response; the
 * notifications it reads together with the result (one pipe read, on a busy client) are lost. A
 * `confirm` round trip (a ping) sent after the last notification is answered only after the
 * client has handled everything read before it, so the result, sent after the answer, comes last.
 */
export function reportRunProgress(options: {
  progressToken: string | number;
  execTimeout: number;
  send: (notification: ServerNotification) => Promise<void>;
  /** A round trip through the client after the last notification; none: only the writes are awaited. */
  confirm?: () => Promise<unknown>;
  intervalMs?: number;
  deliveryTimeoutMs?: number;
  /** Bytes of output-line notifications this run may send (default maxOutputNotificationBytes). */
  maxOutputBytes?: number;
}): RunProgress {
  const started = performance.now();
  let last = 0;
  let stopped = false;
  let sent = 0;
  /** Sends not yet written: at most one per notification of the run (its lines are bounded). */
  const pending = new Set<Promise<void>>();
  const send = (message: string, meta?: Record<string, unknown>) => {
    const seconds = Math.round(performance.now() - started) / 1000;
    last = Math.max(seconds, Math.round((last + 0.001) * 1000) / 1000);
    sent += 1;
    const sending = options
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
    pending.add(sending);
    void sending.then(() => pending.delete(sending));
  };
  const timer = setInterval(() => {
    const seconds = Math.round((performance.now() - started) / 1000);
    send(`the program is running: ${seconds} s of at most ${options.execTimeout} s`);
  }, options.intervalMs ?? progressIntervalMs);
  timer.unref();
  const sendOutput = outputSender(send, options.maxOutputBytes ?? maxOutputNotificationBytes);
  return {
    output(event) {
      if (!stopped) sendOutput(event);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (sent === 0) return;
      await withinMs(options.deliveryTimeoutMs ?? deliveryTimeoutMs, delivered(pending, options.confirm));
    },
  };
}

/** Sends each output line as a notification until `maxBytes` of them were sent, then one saying so. */
function outputSender(
  send: (message: string, meta?: Record<string, unknown>) => void,
  maxBytes: number,
): (event: ProgramOutputEvent) => void {
  let bytes = 0;
  let cut = false;
  return (event) => {
    if (cut) return;
    const output = { stream: event.stream, line: event.line, ...(event.cut ? { cut: true } : {}) };
    const message = event.cut ? event.line : `${event.stream}: ${event.line}`;
    // The notification's size as JSON (the line is in it twice, escaped), with the envelope the
    // transport adds (jsonrpc, method, token, progress figures: under 120 bytes).
    bytes += JSON.stringify({ message, output }).length + 120;
    if (bytes > maxBytes) {
      cut = true;
      const line = `[live output cut: this run's notifications reached ${Math.round(maxBytes / 1024)} KiB; the rest of the output comes in the result]`;
      send(line, { [outputMetaKey]: { stream: event.stream, line, cut: true } });
      return;
    }
    send(message, { [outputMetaKey]: output });
  };
}

/** The pending sends written, then the client's round trip; never throws. */
async function delivered(pending: Set<Promise<void>>, confirm?: () => Promise<unknown>): Promise<void> {
  try {
    await Promise.all(pending);
    await confirm?.();
  } catch {
    // the client went away or did not answer: the result is sent all the same
  }
}

/** `work`, or nothing more once `milliseconds` have passed. */
async function withinMs(milliseconds: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, milliseconds);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
