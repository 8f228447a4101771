import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/** Every container this package creates carries these labels; the sweep finds containers by them. */
export const labelKeys = {
  managed: "codeaction.managed",
  managerId: "codeaction.manager-id",
  ownerPid: "codeaction.owner-pid",
  ownerStart: "codeaction.owner-start",
  ownerPidNamespace: "codeaction.owner-pid-namespace",
  ownerHost: "codeaction.owner-host",
  bootId: "codeaction.boot-id",
  deadline: "codeaction.deadline",
  createdAt: "codeaction.created-at",
} as const;

/** Who owns a container: enough to tell, later and from another process, whether the owner still lives. */
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

export function buildLabels(options: {
  managerId: string;
  deadline: Date;
  extra?: Record<string, string>;
}): Record<string, string> {
  const owner = currentOwner();
  return {
    ...options.extra,
    [labelKeys.managed]: "true",
    [labelKeys.managerId]: options.managerId,
    [labelKeys.ownerPid]: String(owner.pid),
    [labelKeys.ownerStart]: owner.start,
    [labelKeys.ownerPidNamespace]: owner.pidNamespace,
    [labelKeys.ownerHost]: owner.host,
    [labelKeys.bootId]: owner.bootId,
    [labelKeys.deadline]: options.deadline.toISOString(),
    [labelKeys.createdAt]: new Date().toISOString(),
  };
}

/**
 * Whether the process that owns a container is gone. "unknown" when it cannot be told from here
 * (another machine, another pid namespace, no /proc): then only the deadline decides.
 */
export function ownerStatus(labels: Record<string, string>): "alive" | "gone" | "unknown" {
  const me = currentOwner();
  const pid = Number(labels[labelKeys.ownerPid]);
  if (!Number.isInteger(pid) || pid <= 0) return "unknown";
  const bootId = labels[labelKeys.bootId];
  const sameKernel = bootId !== undefined && bootId !== "unknown" && bootId === me.bootId;
  const sameNamespace =
    labels[labelKeys.ownerPidNamespace] === me.pidNamespace && me.pidNamespace !== "unknown";
  if (sameKernel && sameNamespace && me.start !== "unknown") {
    const start = processStartTime(pid);
    if (start === undefined) return "gone";
    return start === labels[labelKeys.ownerStart] ? "alive" : "gone";
  }
  const bothKnown = bootId !== undefined && bootId !== "unknown" && me.bootId !== "unknown";
  if (bothKnown && bootId !== me.bootId && labels[labelKeys.ownerHost] === me.host) {
    // Same machine, another boot: the owner died with the previous boot.
    return "gone";
  }
  if (me.bootId === "unknown" && labels[labelKeys.ownerHost] === me.host) {
    // No /proc (macOS, Windows): a pid check only; a reused pid keeps a container until its deadline.
    try {
      process.kill(pid, 0);
      return "alive";
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ESRCH" ? "gone" : "alive";
    }
  }
  return "unknown";
}

export function deadlineOf(labels: Record<string, string>): Date | undefined {
  const value = labels[labelKeys.deadline];
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
