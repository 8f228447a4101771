// A sandbox container started in a worker thread while this thread is busy (a CLI loading LangChain:
// Node's module loader holds the event loop for a whole import, so no Docker reply is read until it
// ends). Loads nothing but Node's own modules: it is imported before the heavy ones.
import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { sandboxAssets } from "../assets/sandbox-assets.ts";
import type { SandboxConfigInput } from "../config.ts";
import type { EngineDialect } from "../container/engine-dialect.ts";
import type { MountedFile, MountRefusalNote } from "../container/launch.ts";
import type { PlacedFile, PlacingProgress } from "../files/place-files.ts";
import { type FileToPlace, filesToPlace } from "../files/placement-path.ts";
import { workerEnvironment } from "./worker-env.ts";
import type { WorkerInput, WorkerOrder, WorkerReport } from "./worker-protocol.ts";

/** A container the worker started and read back, ready to be taken over by a manager. */
export type PrelaunchedContainer = {
  containerId: string;
  /** The uid:gid it runs as (the worker's pick from `userRange`). */
  user: string;
  /**
   * Stands for the worker's stdin attach (the lifeline): destroying it makes the worker drop the
   * attach; it closes when the attach ends (the container was removed or stopped).
   */
  lifeline: NodeJS.ReadWriteStream;
  /**
   * `start`'s `files` once the worker has placed them, which it does after the hand-over: those
   * placed (all, or those before a failure such as a full /workspace; the turn copies the rest).
   */
  placed: Promise<PlacedFile[]>;
  /** `start`'s files bind-mounted read-only at the container's start (a local engine): read back at the take-over. */
  mounted: MountedFile[];
  /** `start`'s files the worker's mount check refused (they are copied), and why: the manager logs them. */
  mountRefusals?: MountRefusalNote[];
};

/**
 * One sandbox container started in a worker thread, so that its start overlaps whatever this thread
 * does meanwhile. Give it to the manager that will use it (`new SandboxManager(config, { prelaunch })`
 * with the same settings): the manager reads every flag back again in its own thread and hands the
 * container to its first session, or removes it and starts its own when anything differs or failed.
 * The worker never keeps the process alive; if the process dies, the container's lifeline ends
 * with it. Only for `network` "none" or "full" (an allow-list's session network is set up by the
 * manager).
 */
export class SandboxPrelaunch {
  /** The manager id the container is labelled with: the manager that takes it over uses it as its own. */
  readonly managerId: string = randomUUID();
  /** The settings the container was started with. */
  readonly config: SandboxConfigInput;
  /** Why the container could not be used, once that is known (for the manager's log). */
  failure: string | undefined;
  /** The worker thread's entry module (in the `codeaction` command, its bundle's own). */
  readonly workerEntry: string;
  /** The host files `start` was given to place (each as given): on a local engine, mounted at its start. */
  readonly files: readonly string[];
  private readonly worker: Worker | undefined;
  private readonly launched: Promise<PrelaunchedContainer | undefined>;
  private readonly engineChecked: Promise<EngineDialect | undefined>;
  private readonly started: Promise<string | undefined>;
  private readonly discarded: Promise<void>;
  private taken = false;
  /** How many waits hold the worker referenced (waitingFor). */
  private waiting = 0;
  private placing: PlacingProgress | undefined;
  private onPlacingHeard: ((progress: PlacingProgress) => void) | undefined;

  private constructor(config: SandboxConfigInput, deadlineSeconds: number, files: FileToPlace[]) {
    this.config = config;
    this.files = files.map((file) => file.hostPath);
    const standIn = new PassThrough();
    let settle: (container: PrelaunchedContainer | undefined) => void = () => undefined;
    let ended: () => void = () => undefined;
    this.launched = new Promise((resolve) => (settle = resolve));
    let checked: (dialect: EngineDialect | undefined) => void = () => undefined;
    this.engineChecked = new Promise((resolve) => (checked = resolve));
    let startedNow: (containerId: string | undefined) => void = () => undefined;
    this.started = new Promise((resolve) => (startedNow = resolve));
    // Settled by a failure or the end as well (resolving twice changes nothing).
    void this.launched.then((container) => startedNow(container?.containerId)).then(() => checked(undefined));
    this.discarded = new Promise((resolve) => (ended = resolve));
    // Settled by the worker's placement, or with none placed when it ends or fails first.
    let placedNow: (placed: PlacedFile[]) => void = () => undefined;
    const placed = new Promise<PlacedFile[]>((resolve) => (placedNow = resolve));
    const input: WorkerInput = { config, managerId: this.managerId, deadlineSeconds, files };
    // Outside the try: a package without its worker entry is broken, not a reason to start quietly
    // without the worker (AssetMissingError names the fix).
    const workerFile = sandboxAssets.url("prelaunch-worker");
    this.workerEntry = fileURLToPath(workerFile);
    try {
      this.worker = new Worker(workerFile, { workerData: input, env: workerEnvironment() });
    } catch (error) {
      this.fail(settle, ended, `the worker did not start: ${String(error)}`);
      return;
    }
    const worker = this.worker;
    worker.unref();
    standIn.on("close", () => this.order({ type: "release" }));
    let launched = false;
    worker.on("message", (report: WorkerReport) => {
      if (report.type === "placing") {
        const { containerPath, bytesCopied, totalBytes } = report;
        this.placing = { containerPath, bytesCopied, totalBytes };
        this.onPlacingHeard?.(this.placing);
      } else if (report.type === "checked") checked(report.dialect);
      else if (report.type === "started") startedNow(report.containerId);
      else if (report.type === "launched") {
        launched = true;
        const { type: _launched, ...handed } = report;
        settle({ ...handed, lifeline: standIn, placed: this.waitingFor(placed) });
      } else if (report.type === "placed") {
        if (report.failure) this.failure = `placing its files failed: ${report.failure}`;
        placedNow(report.placed);
      } else if (report.type === "failed") this.fail(settle, ended, report.message);
      else if (report.type === "lifeline-ended") standIn.destroy();
      else ended();
    });
    worker.on("error", (error) => this.fail(settle, ended, `the worker failed: ${error.message}`));
    worker.on("exit", () => {
      if (!launched) this.fail(settle, ended, "the worker ended before its container started");
      placedNow([]);
      ended();
      standIn.destroy();
    });
  }

  /**
   * Starts the worker (which connects to the engine the settings name, checks the runtime and the
   * image, and starts one container with every flag read back). Never throws: a failure is kept in
   * `failure`, and the manager then starts its own container as usual.
   */
  static start(
    config: SandboxConfigInput = {},
    options: {
      deadlineSeconds?: number;
      /**
       * Host files to place read-only in the container while this thread is busy, each where
       * `session.placeFiles` puts it (/workspace/data/<its name>, `placedFilePath`; the folder
       * sealed read-only): code-action's data files. The container is handed over before they
       * are in (the manager's read-back and kill helper start meanwhile); the session's
       * `filesPlaced()` waits for them, and its `placeFiles` skips them. A failed placement (a full
       * /workspace) leaves the rest to the turn, which copies them and reports the disk limit.
       */
      files?: readonly string[];
    } = {},
  ): SandboxPrelaunch {
    return new SandboxPrelaunch(config, options.deadlineSeconds ?? 3600, filesToPlace(options.files ?? []));
  }

  /** The container, once: later calls, and a failed start, resolve with undefined. */
  take(): Promise<PrelaunchedContainer | undefined> {
    if (this.taken) return Promise.resolve(undefined);
    this.taken = true;
    return this.waitingFor(this.launched);
  }

  /**
   * The engine's dialect once the worker's engine checks passed (the engine answered, Podman's
   * refusals, the runtime the settings ask for registered); undefined when they failed or the worker
   * ended first. A manager with the same settings uses it instead of asking the engine again.
   */
  checkedEngine(): Promise<EngineDialect | undefined> {
    return this.waitingFor(this.engineChecked);
  }

  /**
   * The container's id as soon as it has started, before the worker's read-back and hand-over: the
   * manager that takes it over starts its warm command in it meanwhile (nothing is handed out before
   * the read-back, and a container that fails it is removed with its warm command). Undefined when
   * it did not start.
   */
  startedContainer(): Promise<string | undefined> {
    return this.waitingFor(this.started);
  }

  /** Hears how far the placement of `files` has come: the latest at once, then each new report. */
  onPlacing(listener: (progress: PlacingProgress) => void): void {
    this.onPlacingHeard = listener;
    if (this.placing) listener(this.placing);
  }

  /** Removes the container unless it was taken (a taken one belongs to its session). Idempotent. */
  async close(): Promise<void> {
    if (this.taken) return;
    this.taken = true;
    this.order({ type: "discard" });
    await this.waitingFor(this.discarded);
  }

  /**
   * Keeps the worker referenced while this thread waits for it: an unreferenced worker does not keep
   * the process alive, and a process waiting for nothing else would otherwise exit in the middle
   * (with code 0). Counted: the first of several waits to end must not unreference the worker the
   * others still wait for (a manager's engine checks, its take-over and a close can overlap).
   */
  private async waitingFor<Value>(promise: Promise<Value>): Promise<Value> {
    if (this.waiting++ === 0) this.worker?.ref();
    try {
      return await promise;
    } finally {
      if (--this.waiting === 0) this.worker?.unref();
    }
  }

  private order(order: WorkerOrder): void {
    try {
      this.worker?.postMessage(order);
    } catch {
      // The worker is gone: nothing of it is left to release.
    }
  }

  private fail(settle: (container: undefined) => void, ended: () => void, message: string): void {
    this.failure ??= message;
    settle(undefined);
    ended();
  }
}
