import { describe, expect, it } from "vitest";
import type { ProgramRunResult } from "../program/program-runner.ts";
import { keepResultMs, maxKeptResults, outputSoFarCharacters, ProgramJobs } from "./program-jobs.ts";

const finished = (runId: string) => ({ runId, status: "ok", result: runId }) as unknown as ProgramRunResult;

/** A run that ends when `end()` is called, writing `lines` first. */
function controlledRun(lines: string[] = []) {
  let end: (run: ProgramRunResult) => void = () => undefined;
  let sawSignal: AbortSignal | undefined;
  const run = (signal: AbortSignal, onOutput: (line: string) => void) => {
    sawSignal = signal;
    for (const line of lines) onOutput(line);
    return new Promise<ProgramRunResult>((resolve, reject) => {
      end = resolve;
      signal.addEventListener("abort", () => reject(signal.reason));
    });
  };
  return { run, end: (value: ProgramRunResult) => end(value), signal: () => sawSignal };
}

describe("ProgramJobs", () => {
  it("says running with the latest output (bounded), then done, and holds its ticket until the run ends", async () => {
    const jobs = new ProgramJobs();
    const controlled = controlledRun(["first", "x".repeat(outputSoFarCharacters), "last"]);
    let released = 0;
    const runId = jobs.start(controlled.run, { release: () => (released += 1) });
    expect(runId).toMatch(/^job_[0-9a-f]{32}$/);
    const running = await jobs.state(runId, 0);
    expect(running.state).toBe("running");
    if (running.state !== "running") return;
    expect(running.output.length).toBe(outputSoFarCharacters);
    expect(running.output.endsWith("last\n")).toBe(true);
    expect(running.output).not.toContain("first");
    expect(released).toBe(0);
    controlled.end(finished(runId));
    expect(await jobs.state(runId, 5)).toEqual({ state: "done", run: finished(runId) });
    expect(released).toBe(1);
  });

  it("answers an unknown or guessed id with unknown", async () => {
    const jobs = new ProgramJobs();
    jobs.start(controlledRun().run, undefined);
    expect(await jobs.state("job_00000000000000000000000000000000", 0)).toEqual({ state: "unknown" });
    await jobs.close();
  });

  it("keeps at most maxKeptResults finished results, the oldest forgotten first, and none past keepResultMs", async () => {
    let now = 1_000_000;
    const jobs = new ProgramJobs({ now: () => now });
    const ids: string[] = [];
    for (let index = 0; index < maxKeptResults + 5; index += 1) {
      const controlled = controlledRun();
      const runId = jobs.start(controlled.run, undefined);
      ids.push(runId);
      now += 1;
      controlled.end(finished(runId));
      await jobs.state(runId, 1);
    }
    expect(jobs.size).toBe(maxKeptResults);
    expect((await jobs.state(ids[0]!, 0)).state).toBe("unknown");
    expect((await jobs.state(ids.at(-1)!, 0)).state).toBe("done");
    now += keepResultMs + 1;
    jobs.start(controlledRun().run, undefined);
    expect(jobs.size).toBe(1);
    await jobs.close();
  });

  it("close() stops every running program through its signal", async () => {
    const jobs = new ProgramJobs();
    const controlled = controlledRun();
    const runId = jobs.start(controlled.run, undefined);
    await jobs.close();
    expect(controlled.signal()?.aborted).toBe(true);
    expect(jobs.size).toBe(0);
    expect((await jobs.state(runId, 0)).state).toBe("unknown");
  });

  it("a wait ends early when the caller goes away", async () => {
    const jobs = new ProgramJobs();
    const runId = jobs.start(controlledRun().run, undefined);
    const controller = new AbortController();
    const waiting = jobs.state(runId, 50, controller.signal);
    controller.abort();
    expect((await waiting).state).toBe("running");
    await jobs.close();
  });
});
