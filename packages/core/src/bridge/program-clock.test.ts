import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { ProgramClock } from "./program-clock.ts";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

test("expires after the limit of running time, not counting pauses", () => {
  const onExpire = vi.fn();
  const clock = new ProgramClock({ limitMs: 1000, onExpire });
  clock.start();
  vi.advanceTimersByTime(600);
  clock.pause();
  clock.pause();
  vi.advanceTimersByTime(5000);
  clock.resume();
  vi.advanceTimersByTime(5000);
  expect(onExpire).not.toHaveBeenCalled();
  clock.resume();
  vi.advanceTimersByTime(399);
  expect(onExpire).not.toHaveBeenCalled();
  vi.advanceTimersByTime(1);
  expect(onExpire).toHaveBeenCalledTimes(1);
});

test("stop keeps it from expiring", () => {
  const onExpire = vi.fn();
  const clock = new ProgramClock({ limitMs: 100, onExpire });
  clock.start();
  clock.stop();
  vi.advanceTimersByTime(1000);
  expect(onExpire).not.toHaveBeenCalled();
});
