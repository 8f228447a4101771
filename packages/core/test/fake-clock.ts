import { vi } from "vitest";

// LangChain's withRetry() waits 1 to 2 s before a retry (its own back-off, which takes no option).
// Tests run that wait on Vitest's fake clock: vi.useFakeTimers({ toFake: ["setTimeout",
// "clearTimeout"] }) first, then await each call through settled().

/** `pending`, with the fake clock moved on (1 s at a time) until it settles. */
export async function settled<T>(pending: Promise<T>): Promise<T> {
  let done = false;
  const watched = pending.finally(() => {
    done = true;
  });
  watched.catch(() => undefined);
  while (!done) {
    await vi.advanceTimersByTimeAsync(1000);
  }
  return watched;
}
