import { currentOwner, ownerLiveness } from "./owner-identity.ts";

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
 * Whether the process that owns a container is gone (ownerLiveness of the owner its labels name).
 * "unknown" when it cannot be told from here (another machine, another pid namespace, no /proc):
 * then only the deadline decides.
 */
export function ownerStatus(labels: Record<string, string>): "alive" | "gone" | "unknown" {
  const pid = Number(labels[labelKeys.ownerPid]);
  if (!Number.isInteger(pid) || pid <= 0) return "unknown";
  return ownerLiveness({
    pid,
    start: labels[labelKeys.ownerStart],
    pidNamespace: labels[labelKeys.ownerPidNamespace],
    host: labels[labelKeys.ownerHost],
    bootId: labels[labelKeys.bootId],
  });
}

export function deadlineOf(labels: Record<string, string>): Date | undefined {
  const value = labels[labelKeys.deadline];
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}
