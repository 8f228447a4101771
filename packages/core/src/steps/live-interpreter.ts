import type { SandboxSession } from "@codeaction/sandbox";
import type { RelayProcess } from "../bridge/host-bridge.ts";
import { spawnRelay } from "../program/relay-process.ts";
import { type ProgramRun, type RunProgramOptions, runProgram } from "../program/run-program.ts";

/**
 * One container and one relay whose interpreter outlives its programs: each `run()` is a step in
 * the same `__main__` (the relay's "keep", docs/bridge-protocol.md). A step that ends otherwise
 * than by its program's own end (a timeout, a kill, the program ending its interpreter, a broken
 * channel) ends the interpreter: `alive` turns false and the container is good only for removal.
 */
export class LiveInterpreter {
  readonly session: SandboxSession;
  readonly #preimport: readonly string[];
  #relay: RelayProcess | undefined;
  #ended = false;

  constructor(
    session: SandboxSession,
    options: { relay?: RelayProcess | Error; preimport?: readonly string[] },
  ) {
    this.session = session;
    this.#preimport = options.preimport ?? [];
    if (options.relay instanceof Error) this.#ended = true;
    else if (options.relay) this.#watch(options.relay);
  }

  get alive(): boolean {
    return !this.#ended;
  }

  /** Runs `program` as the next step; never throws for what the program does (as runProgram). */
  async run(options: Omit<RunProgramOptions, "session" | "keep">): Promise<ProgramRun> {
    if (this.#ended) throw new Error("this interpreter has ended; start a new one");
    if (!this.#relay) {
      const relay = spawnRelay(
        this.session,
        this.#preimport,
        options.logger ? { logger: options.logger } : {},
      );
      if (relay instanceof Error) {
        this.#ended = true;
        return runProgram({ ...options, session: this.session, relay });
      }
      this.#watch(relay);
    }
    const run = await runProgram({ ...options, session: this.session, relay: this.#relay!, keep: true });
    if (!run.living) this.#ended = true;
    return run;
  }

  /** Removes the container (the interpreter with it). */
  close(): Promise<void> {
    this.#ended = true;
    return this.session.close();
  }

  #watch(relay: RelayProcess): void {
    this.#relay = relay;
    void relay.exit.then(
      () => {
        this.#ended = true;
      },
      () => {
        this.#ended = true;
      },
    );
  }
}
