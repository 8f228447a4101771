import { randomInt } from "node:crypto";
import type { SandboxConfig } from "../config.ts";
import { SandboxError } from "../errors/sandbox-error.ts";

/**
 * Uids held by live sandboxes of this process, whatever manager made them. Per-uid kernel quotas
 * (inotify instances, POSIX message-queue bytes, under runc the host kernel's) are then never
 * shared by two sandboxes of one process.
 */
const heldUids = new Set<number>();

/** A sandbox's settings with its own user filled in, and the call that gives the uid back. */
export type SandboxIdentity = { config: SandboxConfig; release: () => void };

/**
 * The settings one sandbox runs with. With `user` set, every sandbox runs as that user (nothing to
 * hold). Unset, the sandbox gets a uid (and the same gid) of `userRange` that no live sandbox of
 * this process holds, from a random place in the range: two processes on one engine pick the same
 * uid for two concurrent sandboxes with odds of about 1 in `count` per pair (1 in 16.7 million with
 * the default range).
 */
export function allocateIdentity(config: SandboxConfig): SandboxIdentity {
  if (config.user !== undefined) return { config, release: () => undefined };
  const { first, count } = config.userRange;
  const start = randomInt(0, Math.min(count, 2 ** 48 - 1));
  for (let step = 0; step < count; step += 1) {
    const uid = first + ((start + step) % count);
    if (!heldUids.has(uid)) return holding(config, uid);
  }
  throw new SandboxError(
    `Every uid of userRange (${first} to ${first + count - 1}) is held by a live sandbox of this process: widen userRange.count, or lower maxConcurrent or pool.`,
    { code: "invalid-option" },
  );
}

/**
 * The settings of a sandbox started elsewhere in this process (a prelaunch worker) as `user`, held
 * like `allocateIdentity`'s: undefined when that uid is already held here (the container is then
 * not taken over) or lies outside `userRange`.
 */
export function holdIdentity(config: SandboxConfig, user: string): SandboxIdentity | undefined {
  if (config.user !== undefined)
    return config.user === user ? { config, release: () => undefined } : undefined;
  const match = /^(\d+):(\d+)$/.exec(user);
  const uid = Number(match?.[1]);
  const { first, count } = config.userRange;
  if (!match || match[1] !== match[2] || uid < first || uid >= first + count || heldUids.has(uid)) {
    return undefined;
  }
  return holding(config, uid);
}

/** Holds `uid` for one sandbox: its settings run as uid:uid until `release`. */
function holding(config: SandboxConfig, uid: number): SandboxIdentity {
  heldUids.add(uid);
  let held = true;
  return {
    config: { ...config, user: `${uid}:${uid}` },
    release: () => {
      if (held) heldUids.delete(uid);
      held = false;
    },
  };
}
