import { SandboxSession, type SessionInternals } from "./session.ts";

/**
 * A session whose container came from the warm pool: its container carries the manager's warm
 * command, already running, which `takeWarm()` hands out (no exec on the critical path). `spawn`
 * always starts a process of its own. The container still serves this one session only.
 */
export class PooledSession extends SandboxSession {
  readonly createdAt: number;
  private connected = true;

  constructor(internals: SessionInternals) {
    super(internals);
    this.createdAt = Date.now();
    const lifeline = internals.launched.lifeline;
    for (const event of ["end", "close", "error"]) lifeline.on(event, () => (this.connected = false));
  }

  /** Whether the container can still be handed out: connected, and its warm command still waiting. */
  get warmAndAlive(): boolean {
    return this.connected && this.warmUsable;
  }
}
