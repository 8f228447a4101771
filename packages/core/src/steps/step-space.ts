import type { Logger } from "pino";
import type { CallLogEntry } from "../durable/call-log.ts";
import type { HistoryEntry } from "../durable/history.ts";
import { spawnRelay } from "../program/relay-process.ts";
import type { ProgramRun } from "../program/run-program.ts";
import { createSessionFor, placeDataFilesFor } from "../turn/attempt-container.ts";
import { type TurnContext, trackCleanup } from "../turn/turn-context.ts";
import type { Attempt } from "../types.ts";
import { LiveInterpreter } from "./live-interpreter.ts";
import { reexecute } from "./reexecute.ts";

/** What an attempt says of itself when it asks for the space's interpreter. */
type Asker = { attemptNumber: number; sample?: number; logger?: Logger; attemptsSoFar: Attempt[] };

/**
 * Where the steps of a run (or the runs of a thread) run: one live interpreter, and the history of
 * the programs that shaped it. When the interpreter is gone (a step timed out, the program ended
 * it, the thread was evicted or restored in another process), the next `ready()` starts a fresh
 * container and re-executes the history in it, every tool call answered from its log; what cannot
 * be re-executed leaves a fresh interpreter and a note the model is shown (`lost`).
 */
export class StepSpace {
  interpreter: LiveInterpreter | undefined;
  readonly history: HistoryEntry[] = [];
  /** The seed of the programs' `random` module: the one of the run that started the history. */
  seed: string | undefined;
  /** Why the interpreter started afresh instead of from its history (told to the model once). */
  lost: string | undefined;
  /** What `__main__` held after the last program that left the interpreter alive. */
  summary = "";
  /** How the space's interpreter came back, the last time it had to (for the result and the log). */
  restored: { programs: number; ms: number } | undefined;

  /** A space with no interpreter yet: its first `ready()` re-executes `history` (a resumed run, a stored thread). */
  static fromHistory(past: { seed: string; history: readonly HistoryEntry[]; summary?: string }): StepSpace {
    const space = new StepSpace();
    space.seed = past.seed;
    space.history.push(...past.history);
    space.summary = past.summary ?? "";
    return space;
  }

  /** The live interpreter, started (and restored from the history) when there is none. */
  async ready(context: TurnContext, asker: Asker): Promise<LiveInterpreter> {
    if (this.interpreter?.alive) return this.interpreter;
    if (this.interpreter) this.release(context);
    this.seed ??= context.seed;
    this.restored = undefined;
    const interpreter = await this.#start(context, asker);
    if (this.history.length === 0) return interpreter;
    const started = performance.now();
    const refused = await reexecute(context, interpreter, { history: this.history, seed: this.seed });
    if (refused === undefined) {
      this.restored = { programs: this.history.length, ms: Math.round(performance.now() - started) };
      asker.logger?.debug(this.restored, "interpreter restored by re-executing its history");
      return interpreter;
    }
    // A half-restored interpreter holds part of the state: it goes, and a fresh one starts.
    asker.logger?.debug({ refused }, "the interpreter could not be restored; it starts afresh");
    this.lost = refused;
    this.history.length = 0;
    this.seed = context.seed;
    this.release(context);
    return this.#start(context, asker);
  }

  async #start(context: TurnContext, asker: Asker): Promise<LiveInterpreter> {
    const { options } = context;
    const session = await createSessionFor(context, asker);
    const relay = spawnRelay(
      session,
      options.settings.preimport,
      asker.logger ? { logger: asker.logger } : {},
    );
    const interpreter = new LiveInterpreter(session, {
      relay,
      ...(options.settings.preimport ? { preimport: options.settings.preimport } : {}),
    });
    this.interpreter = interpreter;
    if (options.dataFiles?.length) await placeDataFilesFor(context, session, asker);
    return interpreter;
  }

  /** Tool calls the current run's finished steps made: the run's maxToolCalls covers all its steps. */
  #stepCalls = 0;

  /** A new run starts here (a thread's next question): its steps have the whole maxToolCalls again. */
  beginRun(): void {
    this.#stepCalls = 0;
  }

  /** The tool calls the next program of this run may make (a repair has its step's whole share). */
  callsLeft(maxToolCalls: number): number {
    return Math.max(0, maxToolCalls - this.#stepCalls);
  }

  /** A program that ran here: kept in the history while its interpreter lives on. */
  record(program: string, run: ProgramRun, callLog: CallLogEntry[]): void {
    if (!run.living) return;
    this.history.push({ program, callLog, exitCode: run.exitCode });
    this.summary = run.summary ?? "";
    if (run.status === "no-result") this.#stepCalls += run.toolCalls.length;
  }

  /** Removes the interpreter's container, off the critical path (close() and an aborted turn wait). */
  release(context: TurnContext): void {
    const interpreter = this.interpreter;
    if (!interpreter) return;
    this.interpreter = undefined;
    const removal = interpreter.close().catch((error: unknown) => {
      context.logger?.warn({ error }, "could not remove a steps container; the sandbox sweep will");
    });
    context.options.trackRemoval?.(removal);
    trackCleanup(context, removal);
  }
}
