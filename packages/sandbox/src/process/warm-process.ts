import { randomUUID } from "node:crypto";
import { execMarkerName } from "../config.ts";
import type { EngineContainer, EngineExec } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { type SpawnedProcess, startExec } from "./exec.ts";
import { createProcessPipes, ExecConnection, type ProcessPipes } from "./exec-connection.ts";

type Socket = NodeJS.ReadWriteStream & { ref?: () => void; unref?: () => void };

/**
 * A command to keep warm: `given`, the array its starter passed (what `WarmProcess.argv` is), and
 * `argv`, the copy taken when the sandbox received it (what runs, whatever the caller does later).
 */
export type WarmCommand = { readonly given: readonly string[]; readonly argv: readonly string[] };

/** A command as the sandbox receives it (`warmCommand`, `createSession`'s `command`): kept, and copied to run. */
export function warmCommandOf(given: readonly string[]): WarmCommand {
  return { given, argv: [...given] };
}

/**
 * What the session that hands a warm process out lends it for its claim: when its stdin may flow
 * (the kill helper ready), how its processes are killed, and where its connection is kept until the
 * session closes.
 */
export type WarmProcessOwner = {
  ready(): Promise<void>;
  killMarked(id: string): Promise<unknown>;
  keep(connection: ExecConnection): void;
  release(connection: ExecConnection): void;
};

/**
 * The process a container starts with or keeps warm: the command a cold session's container starts
 * with (`createSession({ command })`, its exec out right after the container's start, before the kill
 * helper's), or the manager's `warmCommand` in a container of the warm pool or a warm prelaunch. One
 * exec with stdin attached, nothing written to it yet; while it waits, its connection does not keep
 * the host process alive. The session hands it out once (`session.takeWarm()`): `claim()` makes it
 * an ordinary SpawnedProcess (its stdin flows once the kill helper is ready), `close()` ends it
 * unused. One never taken ends with its container.
 */
export class WarmProcess {
  /**
   * The command it runs: the very array its starter gave (`warmCommand`, `createSession`'s
   * `command`), so a starter recognises its own command by identity, never by comparing argv.
   */
  readonly argv: readonly string[];
  readonly #id: string;
  readonly #socket: Socket;
  readonly #connection: ExecConnection;
  readonly #pipes: ProcessPipes;
  readonly #exit: Promise<{ exitCode: number }>;
  #ended = false;
  #state: "waiting" | "claimed" | "closed" = "waiting";
  #owner: WarmProcessOwner | undefined;

  private constructor(argv: readonly string[], id: string, started: { exec: EngineExec; stream: Socket }) {
    this.argv = argv;
    this.#id = id;
    this.#socket = started.stream;
    this.#pipes = createProcessPipes();
    this.#connection = new ExecConnection(started, this.#pipes);
    // Its output flows from the start (so its end is seen while it waits); its stdin at the claim.
    this.#connection.connectOutput();
    this.#exit = this.#connection.exit();
    this.#exit.catch(() => undefined);
    const ended = () => {
      this.#ended = true;
    };
    this.#exit.then(ended, ended);
    for (const event of ["end", "close", "error"]) this.#socket.on(event, ended);
  }

  /** Starts `command` in the container: the marker and working folder of `SandboxSession.spawn`. */
  static async start(
    container: EngineContainer,
    command: WarmCommand,
    options: { cwd: string; guard: boolean },
  ): Promise<WarmProcess> {
    const id = randomUUID();
    const started = await startExec(container, {
      argv: [...command.argv],
      env: { [execMarkerName]: id },
      cwd: options.cwd,
      stdin: true,
      guard: options.guard,
    });
    const socket = started.stream as Socket;
    socket.unref?.();
    return new WarmProcess(command.given, id, { exec: started.exec, stream: socket });
  }

  /** The session handing `warm` out lends it what its claim needs (session.takeWarm()). */
  static handOut(warm: WarmProcess, owner: WarmProcessOwner): WarmProcess {
    warm.#owner = owner;
    return warm;
  }

  /** Still running, still connected, and neither claimed nor closed. */
  get alive(): boolean {
    return !this.#ended && this.#state === "waiting";
  }

  /**
   * The process, already running: from now on its connection keeps the host process alive like any
   * exec, and its stdin flows once the container's kill helper is ready. Once only.
   */
  claim(): SpawnedProcess {
    if (this.#state !== "waiting") {
      throw new SandboxError(`This warm process was already ${this.#state}; take a new one, or spawn.`, {
        code: "invalid-option",
      });
    }
    this.#state = "claimed";
    this.#socket.ref?.();
    const owner = this.#owner;
    const connection = this.#connection;
    const started = (owner ? owner.ready() : Promise.resolve()).then(() => {
      connection.connectInput();
      owner?.keep(connection);
    });
    started.catch((error: unknown) => {
      connection.close();
      this.#pipes.stdout.destroy(error as Error);
      this.#pipes.stderr.destroy(error as Error);
    });
    const exit = started.then(() => this.#exit.finally(() => owner?.release(connection)));
    exit.catch(() => undefined);
    return {
      ...this.#pipes,
      exit,
      started,
      kill: async () => {
        await started.catch(() => undefined);
        await owner?.killMarked(this.#id);
      },
    };
  }

  /**
   * Ends it: unclaimed, its stdin closes (a waiting command sees end of file) with its connection;
   * claimed, its connection is dropped (the container's teardown). Idempotent.
   */
  close(): void {
    if (this.#state === "waiting") {
      this.#state = "closed";
      this.#pipes.stdin.end();
      this.#pipes.stdout.resume();
      this.#pipes.stderr.resume();
    }
    this.#ended = true;
    this.#connection.close();
    destroyStream(this.#socket);
  }
}

/** Longest command accepted, in bytes (Linux takes about 2 MiB of arguments; the bridge relay is ~40 KB). */
const maxCommandBytes = 1024 * 1024;

/** `createSession`'s `command`, checked: a non-empty list of strings, at most 1 MiB in all. */
export function checkedCommand(command: unknown): WarmCommand | undefined {
  if (command === undefined) return undefined;
  const valid =
    Array.isArray(command) &&
    command.length > 0 &&
    command.every((part) => typeof part === "string" && !part.includes("\0"));
  if (!valid) {
    throw new SandboxError(
      'createSession\'s `command` must be a non-empty array of strings without NUL bytes (an argv such as ["python3", "-c", "..."]); leave it out to start none.',
      { code: "invalid-option" },
    );
  }
  const bytes = command.reduce((total: number, part: string) => total + Buffer.byteLength(part) + 1, 0);
  if (bytes > maxCommandBytes) {
    throw new SandboxError(
      `createSession's \`command\` is ${bytes} bytes long, over the ${maxCommandBytes} bytes allowed; put a long program in a file and run that.`,
      { code: "invalid-option" },
    );
  }
  return warmCommandOf(command);
}
