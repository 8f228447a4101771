import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

// Who a process is, enough to tell later and from another process whether it still runs: the owner
// of a container (its labels, container/labels.ts) and the taker of a run in the CLI's journal.

/** Who a process is (a container's owner, a run's taker): enough to tell later, from another process, whether it still runs. */
export type OwnerIdentity = {
  pid: number;
  /** The process start time in clock ticks after boot (/proc/<pid>/stat field 22), "unknown" off Linux. */
  start: string;
  pidNamespace: string;
  host: string;
  bootId: string;
};

function readOrUnknown(read: () => string): string {
  try {
    return read().trim() || "unknown";
  } catch {
    return "unknown";
  }
}

/** Field 22 (starttime) of /proc/<pid>/stat, or undefined when the process does not exist. */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may contain spaces: count from the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields[19];
}

let cachedIdentity: OwnerIdentity | undefined;

/** This process's identity (cached: it does not change). */
export function currentOwner(): OwnerIdentity {
  cachedIdentity ??= {
    pid: process.pid,
    start: processStartTime(process.pid) ?? "unknown",
    pidNamespace: readOrUnknown(() => readlinkSync("/proc/self/ns/pid")),
    host: hostname(),
    bootId: readOrUnknown(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")),
  };
  return cachedIdentity;
}

/**
 * Whether the process `owner` names is gone, seen from this process: on this machine's kernel and
 * in its pid namespace, by its start time (a pid given to a new process since is not the owner); on
 * this host after a reboot, gone; without /proc on this host, by its pid alone. "unknown" when it
 * cannot be told from here (another machine, another pid namespace). A field not known is undefined.
 */
export function ownerLiveness(
  owner: { pid: number } & Partial<Omit<OwnerIdentity, "pid">>,
): "alive" | "gone" | "unknown" {
  const me = currentOwner();
  const { pid, bootId } = owner;
  const sameKernel = bootId !== undefined && bootId !== "unknown" && bootId === me.bootId;
  const sameNamespace = owner.pidNamespace === me.pidNamespace && me.pidNamespace !== "unknown";
  if (sameKernel && sameNamespace && me.start !== "unknown") {
    const start = processStartTime(pid);
    if (start === undefined) return "gone";
    return start === owner.start ? "alive" : "gone";
  }
  const bothKnown = bootId !== undefined && bootId !== "unknown" && me.bootId !== "unknown";
  if (bothKnown && bootId !== me.bootId && owner.host === me.host) {
    // Same machine, another boot: the owner died with the previous boot.
    return "gone";
  }
  if (me.bootId === "unknown" && owner.host === me.host) {
    // No /proc (macOS, Windows): a pid check only; a reused pid counts as the owner.
    try {
      process.kill(pid, 0);
      return "alive";
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH" ? "gone" : "alive";
    }
  }
  return "unknown";
}
