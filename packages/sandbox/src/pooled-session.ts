import type { SpawnedProcess } from "./exec.ts";
import { SandboxSession, type SessionInternals, type WarmHandle } from "./session.ts";
import type { WarmProcess } from "./warm-process.ts";

/**
 * A session whose container was started with the manager's warm command waiting: one from the warm
 * pool, or a cold one of createSession's own. `takeWarm()` hands out the warm command's process,
 * already running in the container: no exec on the critical path. As a shortcut, its first `spawn`
 * of the warm command (same argv, no env, no cwd) claims it too. Any other spawn works as usual
 * (and ends the warm process unused). The container still serves this one session only.
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
        return warm.claim((id) => this.killMarked(id));
      },
      close: () => warm.close(),
    };
  }

  override spawn(
    argv: string[],
    options: { env?: Record<string, string>; cwd?: string } = {},
  ): SpawnedProcess {
    const warm = this.takeWarm();
    if (warm && sameCommand(warm.argv, argv, options)) return warm.claim();
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
function sameCommand(
  warmArgv: readonly string[],
  argv: string[],
  options: { env?: Record<string, string>; cwd?: string },
): boolean {
  const noExtras =
    (options.env === undefined || Object.keys(options.env).length === 0) && options.cwd === undefined;
  return noExtras && argv.length === warmArgv.length && argv.every((part, index) => part === warmArgv[index]);
}
