import { randomUUID } from "node:crypto";
import { execMarkerName } from "./config.ts";
import { destroyStream } from "./docker-operations.ts";
import type { EngineContainer } from "./engine/container-engine.ts";
import { type SpawnedProcess, startExec } from "./exec.ts";
import { createProcessPipes, ExecConnection } from "./exec-stream.ts";

type Socket = NodeJS.ReadWriteStream & { ref?: () => void; unref?: () => void };

/** What a warm command is started with: its argv and working folder (the manager's `warmCommand`). */
export type WarmCommand = { argv: readonly string[]; cwd: string };

/**
 * A command started in a container before anyone asked for it (with `SandboxManager`'s
 * `warmCommand`): one exec with stdin attached, nothing written to it yet. While it waits, its
 * connection does not keep the host process alive; `claim` makes it an ordinary SpawnedProcess.
 * Whoever hands it out must first wait for the container's kill helper (`helper.ready`): what is
 * written to its stdin runs at once.
 */
export class WarmProcess {
  readonly argv: readonly string[];
  readonly process: SpawnedProcess;
  private readonly socket: Socket;
  private ended = false;
  /** The marker kill of whoever claimed it (none before: nobody holds the process yet). */
  private kill: ((id: string) => Promise<unknown>) | undefined;

  private constructor(argv: readonly string[], process: SpawnedProcess, socket: Socket) {
    this.argv = argv;
    this.process = process;
    this.socket = socket;
    const ended = () => {
      this.ended = true;
    };
    process.exit.then(ended, ended);
    for (const event of ["end", "close", "error"]) socket.on(event, () => (this.ended = true));
  }

  /** Starts the command in the container (same marker and working folder as SandboxSession.spawn). */
  static async start(
    container: EngineContainer,
    command: WarmCommand,
    options: { guard: boolean },
  ): Promise<WarmProcess> {
    const id = randomUUID();
    const started = await startExec(container, {
      argv: [...command.argv],
      env: { [execMarkerName]: id },
      cwd: command.cwd,
      stdin: true,
      guard: options.guard,
    });
    const socket = started.stream as Socket;
    socket.unref?.();
    const pipes = createProcessPipes();
    const connection = new ExecConnection(started, pipes);
    connection.connect();
    const exit = connection.exit();
    exit.catch(() => undefined);
    let warm: WarmProcess | undefined;
    const process: SpawnedProcess = {
      ...pipes,
      exit,
      started: Promise.resolve(),
      kill: async () => {
        await warm?.kill?.(id);
      },
    };
    warm = new WarmProcess(command.argv, process, socket);
    return warm;
  }

  /** Still running and still connected. */
  get alive(): boolean {
    return !this.ended;
  }

  /**
   * Hands the process out: from now on its connection keeps the host process alive like any exec,
   * and its `kill()` is `kill` with its marker (the session's marker kill).
   */
  claim(kill: (id: string) => Promise<unknown>): SpawnedProcess {
    this.kill = kill;
    this.socket.ref?.();
    return this.process;
  }

  /** Ends the process's stdin (a waiting command sees end of file) and drops the connection. */
  close(): void {
    this.ended = true;
    this.process.stdin.end();
    this.process.stdout.resume();
    this.process.stderr.resume();
    destroyStream(this.socket);
  }
}
