import { randomUUID } from "node:crypto";
import { execMarkerName } from "./config.ts";
import type { LaunchedContainer } from "./container/launch.ts";
import { destroyStream } from "./engine/engine-operations.ts";
import { type SpawnedProcess, startExec } from "./process/exec.ts";
import { createProcessPipes, ExecConnection } from "./process/exec-connection.ts";
import { SandboxSession, type SessionInternals, type WarmHandle } from "./session.ts";

type Socket = NodeJS.ReadWriteStream & { ref?: () => void; unref?: () => void };

/**
 * A command started in a warm container before anyone asked for it (with `SandboxManager`'s
 * `warmCommand`): one exec with stdin attached, nothing written to it yet. While it waits, its
 * connection does not keep the host process alive; `claim` makes it an ordinary SpawnedProcess.
 */
export class WarmProcess {
  readonly argv: readonly string[];
  readonly process: SpawnedProcess;
  private readonly socket: Socket;
  private ended = false;

  private constructor(argv: string[], process: SpawnedProcess, socket: Socket) {
    this.argv = argv;
    this.process = process;
    this.socket = socket;
    const ended = () => {
      this.ended = true;
    };
    process.exit.then(ended, ended);
    for (const event of ["end", "close", "error"]) socket.on(event, () => (this.ended = true));
  }

  /** Starts `argv` in the container (same marker and working folder as SandboxSession.spawn). */
  static async start(
    launched: LaunchedContainer,
    argv: string[],
    options: { cwd: string },
  ): Promise<WarmProcess> {
    const id = randomUUID();
    const started = await startExec(launched.container, {
      argv,
      env: { [execMarkerName]: id },
      cwd: options.cwd,
      stdin: true,
      guard: launched.guardExecs,
    });
    const socket = started.stream as Socket;
    socket.unref?.();
    const pipes = createProcessPipes();
    const connection = new ExecConnection(started, pipes);
    connection.connect();
    const exit = connection.exit();
    exit.catch(() => undefined);
    const process: SpawnedProcess = {
      ...pipes,
      exit,
      started: Promise.resolve(),
      kill: async () => {
        await launched.helper.killMarked(id);
      },
    };
    return new WarmProcess(argv, process, socket);
  }

  /** Still running and still connected. */
  get alive(): boolean {
    return !this.ended;
  }

  /** Hands the process out: from now on its connection keeps the host process alive like any exec. */
  claim(): SpawnedProcess {
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

/**
 * A session whose container came from the warm pool. `takeWarm()` hands out the warm command's
 * process, already running in the container: no exec on the critical path. As a shortcut, its first
 * `spawn` of the warm command (same argv, no env, no cwd) claims it too. Any other spawn works as
 * usual (and ends the warm process unused). The container still serves this one session only.
 */
export class PooledSession extends SandboxSession {
  readonly createdAt: number;
  private warm: WarmProcess | undefined;
  private claimed: WarmProcess | undefined;
  private connected = true;

  constructor(internals: SessionInternals, options: { warm?: WarmProcess } = {}) {
    super(internals);
    this.createdAt = Date.now();
    this.warm = options.warm;
    const lifeline = internals.launched.lifeline;
    for (const event of ["end", "close", "error"]) lifeline.on(event, () => (this.connected = false));
  }

  /** Whether the container can still be handed out: connected, and its warm command still waiting. */
  get warmAndAlive(): boolean {
    return this.connected && (this.warm === undefined || this.warm.alive);
  }

  override takeWarm(): WarmHandle | undefined {
    const warm = this.warm;
    this.warm = undefined;
    if (!warm?.alive) {
      warm?.close();
      return undefined;
    }
    return {
      argv: warm.argv,
      claim: () => {
        this.claimed = warm;
        return warm.claim();
      },
      close: () => warm.close(),
    };
  }

  override spawn(
    argv: string[],
    options: { env?: Record<string, string>; cwd?: string } = {},
  ): SpawnedProcess {
    const warm = this.takeWarm();
    if (warm && isSameCommand(warm.argv, argv, options)) return warm.claim();
    warm?.close();
    return super.spawn(argv, options);
  }

  override async close(): Promise<void> {
    this.warm?.close();
    this.warm = undefined;
    try {
      await super.close();
    } finally {
      // The container is gone, so nothing more can come from the claimed process. Under gVisor the
      // engine does not always end an exec's connection when its container goes: drop it here.
      this.claimed?.close();
    }
  }
}

/** Whether a spawn asks for exactly the warm command: the same argv, no env, no cwd. */

/** Whether a spawn of `argv` with `options` is the warm command itself (same argv, no env, no cwd). */
function isSameCommand(
  startedArgv: readonly string[],
  argv: readonly string[],
  options: { env?: Record<string, string>; cwd?: string },
): boolean {
  const noExtras =
    (options.env === undefined || Object.keys(options.env).length === 0) && options.cwd === undefined;
  return (
    noExtras && argv.length === startedArgv.length && argv.every((part, index) => part === startedArgv[index])
  );
}
