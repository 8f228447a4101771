import { randomBytes } from "node:crypto";
import type { ProgramRunResult } from "../program/program-runner.ts";
import type { AdmissionTicket } from "./run-admission.ts";

/** Finished results a server keeps for program_result (each bounded by the reply's bounds). */
export const maxKeptResults = 20;
/** How long a finished result waits to be fetched before it is forgotten. */
export const keepResultMs = 10 * 60 * 1000;
/** Characters of a running program's latest output that program_result shows. */
export const outputSoFarCharacters = 16 * 1024;
/**
 * The longest one program_result call waits: under the 60 s a client's request times out at by
 * default (the TypeScript SDK's, the MCP Inspector's), whatever the client sends.
 */
export const maxWaitSeconds = 50;

type Job = {
  startedAt: number;
  /** The latest output lines, at most outputSoFarCharacters. */
  output: string;
  controller: AbortController;
  finished: Promise<ProgramRunResult | Error>;
  settled?: { value: ProgramRunResult | Error; at: number };
};

/** What program_result says of a run: its result, that it still runs, or that it is not known here. */
export type JobState =
  | { state: "done"; run: ProgramRunResult }
  | { state: "failed"; error: Error }
  | { state: "running"; elapsedMs: number; output: string }
  | { state: "unknown" };

/**
 * Programs started by start_program, for clients whose requests cannot wait for a long program
 * (no progress notifications, a fixed request timeout). A run id is 128 random bits: only the
 * client that started a run learns it, so clients sharing a server cannot read each other's runs.
 * Bounded: the runs themselves by the server's admission (the ticket is held until the run ends),
 * finished results by count (maxKeptResults, the oldest forgotten first) and age (keepResultMs),
 * a running program's output by its last outputSoFarCharacters.
 */
export class ProgramJobs {
  readonly #jobs = new Map<string, Job>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Starts `run` as a job holding `ticket` until it ends; returns its run id. */
  start(
    run: (signal: AbortSignal, onOutput: (line: string) => void) => Promise<ProgramRunResult>,
    ticket: AdmissionTicket | undefined,
  ): string {
    this.#forgetOld();
    const runId = `job_${randomBytes(16).toString("hex")}`;
    const controller = new AbortController();
    const job: Job = {
      startedAt: this.#now(),
      output: "",
      controller,
      finished: Promise.resolve(undefined as never),
    };
    const onOutput = (line: string) => {
      job.output = `${job.output}${line}\n`.slice(-outputSoFarCharacters);
    };
    job.finished = run(controller.signal, onOutput)
      .catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))))
      .then((value) => {
        ticket?.release();
        job.settled = { value, at: this.#now() };
        this.#forgetOld();
        return value;
      });
    this.#jobs.set(runId, job);
    return runId;
  }

  /** The run's state after waiting at most `waitSeconds` (capped at maxWaitSeconds) for it to end. */
  async state(runId: string, waitSeconds: number, signal?: AbortSignal): Promise<JobState> {
    const job = this.#jobs.get(runId);
    if (!job) return { state: "unknown" };
    if (!job.settled) {
      const waitMs = Math.min(Math.max(waitSeconds, 0), maxWaitSeconds) * 1000;
      await waitFor(job.finished, waitMs, signal);
    }
    return this.#stateOf(job);
  }

  /** The run's state now, without waiting; undefined when it is not known here. */
  peek(runId: string): { startedAt: number; endedAt?: number; state: JobState } | undefined {
    const job = this.#jobs.get(runId);
    if (!job) return undefined;
    const { settled } = job;
    return {
      startedAt: job.startedAt,
      ...(settled ? { endedAt: settled.at } : {}),
      state: this.#stateOf(job),
    };
  }

  /** A job's state now: running with its output so far, failed, or done with its run. */
  #stateOf(job: Job): JobState {
    const { settled } = job;
    if (!settled) return { state: "running", elapsedMs: this.#now() - job.startedAt, output: job.output };
    return settled.value instanceof Error
      ? { state: "failed", error: settled.value }
      : { state: "done", run: settled.value };
  }

  /** Kills one running program (its run ends "aborted"); false when it is not known or has ended. */
  cancel(runId: string, reason: string): boolean {
    const job = this.#jobs.get(runId);
    if (!job || job.settled) return false;
    job.controller.abort(new Error(reason));
    return true;
  }

  /** Kills every running program (the server is stopping) and waits for them to end. */
  async close(): Promise<void> {
    const jobs = [...this.#jobs.values()];
    for (const job of jobs) job.controller.abort(new Error("the server is stopping"));
    await Promise.allSettled(jobs.map((job) => job.finished));
    this.#jobs.clear();
  }

  /** How many runs are known (running and kept), for the bounds' tests. */
  get size(): number {
    return this.#jobs.size;
  }

  /** Forgets results older than keepResultMs, then the oldest beyond maxKeptResults. */
  #forgetOld(): void {
    const now = this.#now();
    const finished = [...this.#jobs.entries()].filter(([, job]) => job.settled !== undefined);
    for (const [runId, job] of finished) {
      if (now - (job.settled?.at ?? now) > keepResultMs) this.#jobs.delete(runId);
    }
    const kept = finished.filter(([runId]) => this.#jobs.has(runId));
    kept.sort(([, a], [, b]) => (a.settled?.at ?? 0) - (b.settled?.at ?? 0));
    for (const [runId] of kept.slice(0, Math.max(0, kept.length - maxKeptResults))) this.#jobs.delete(runId);
  }
}

/** Resolves when `promise` settles, after `ms`, or when `signal` aborts, whichever is first. */
function waitFor(promise: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    void promise.then(done, done);
  });
}
