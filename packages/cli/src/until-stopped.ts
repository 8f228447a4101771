/** Why a long-running command (desk, mcp) stops. */
export type StopReason = "signal" | "input-ended" | "parent-exited";

/** How often the parent is looked at: a stopped desk lingers at most this long. */
const parentPollMs = 1000;

/**
 * Resolves when a long-running command should stop: on SIGINT or SIGTERM, at the end of any of
 * `streams`, or when the process that started it has gone. `npx codeaction desk` stopped through
 * npm's pid (npm does not pass the signal on) leaves its child reparented: noticing that is the only
 * way to stop then, and remove its containers. (`nohup` cannot ask otherwise: Node resets every
 * ignored signal at start.) Every listener and timer is removed once it resolves.
 */
export function untilStopped(
  options: { streams?: NodeJS.ReadableStream[]; watchParent?: boolean } = {},
): Promise<StopReason> {
  const streams = options.streams ?? [];
  const parent = process.ppid;
  const watchParent = options.watchParent ?? true;
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const stopWith = (reason: StopReason) => () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      for (const stream of streams) {
        stream.off("end", onEnd);
        stream.off("close", onEnd);
      }
      if (timer) clearInterval(timer);
      resolve(reason);
    };
    const onSignal = stopWith("signal");
    const onEnd = stopWith("input-ended");
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    for (const stream of streams) {
      stream.once("end", onEnd);
      stream.once("close", onEnd);
    }
    if (watchParent && parent > 1) {
      const onOrphaned = stopWith("parent-exited");
      timer = setInterval(() => {
        if (process.ppid !== parent) onOrphaned();
      }, parentPollMs);
      timer.unref();
    }
  });
}
