import { describe, expect, it } from "vitest";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { buildLabels, labelKeys } from "./labels.ts";
import { currentOwner } from "./owner-identity.ts";
import { deadlineGraceMs, stoppedGraceMs, sweepContainers, sweepReason } from "./sweep.ts";

const now = new Date();
const live = (labels: Record<string, string>, state = "running") => ({
  State: state,
  Labels: labels,
  Created: Math.floor(now.getTime() / 1000),
});

describe("sweepReason", () => {
  const future = new Date(now.getTime() + 60_000);
  it("keeps a live owner's running container before its deadline, even another manager's", () => {
    const labels = buildLabels({ managerId: "someone-else", deadline: future });
    expect(sweepReason(live(labels), { now, ownManagerId: "me" })).toBeUndefined();
  });
  it("never touches its own manager's containers", () => {
    const labels = buildLabels({ managerId: "me", deadline: new Date(now.getTime() - 1000) });
    expect(sweepReason(live(labels, "exited"), { now, ownManagerId: "me" })).toBeUndefined();
  });
  it("removes stopped containers, passed deadlines, and containers whose owner is gone or was replaced", () => {
    const labels = buildLabels({ managerId: "other", deadline: future });
    expect(sweepReason(live(labels, "exited"), { now })).toBe("it is exited");
    const late = buildLabels({
      managerId: "other",
      deadline: new Date(now.getTime() - deadlineGraceMs - 1000),
    });
    expect(sweepReason(live(late), { now })).toMatch(/deadline .* passed/);
    const stoppedLate = buildLabels({ managerId: "other", deadline: new Date(now.getTime() - 1000) });
    expect(sweepReason(live(stoppedLate, "created"), { now })).toMatch(/deadline .* passed/);
    // A pid that does not exist (above pid_max) and a live pid with another start time (reused).
    expect(sweepReason(live({ ...labels, [labelKeys.ownerPid]: "99999999" }), { now })).toMatch(
      /owner process .* is gone/,
    );
    expect(sweepReason(live({ ...labels, [labelKeys.ownerStart]: "1" }), { now })).toMatch(/is gone/);
  });
  it("leaves a live owner's running container to its own PID 1 for a grace past its deadline", () => {
    // The container's init ends it at its deadline; a sweep racing it must not be the one that does.
    const justLate = buildLabels({ managerId: "other", deadline: new Date(now.getTime() - 1000) });
    expect(sweepReason(live(justLate), { now })).toBeUndefined();
    const graceOver = new Date(now.getTime() + deadlineGraceMs);
    expect(sweepReason(live(justLate), { now: graceOver })).toMatch(/deadline .* passed/);
  });
  it("leaves a live owner's stopped container to it for a grace after it ended, before its deadline", () => {
    // The owner reads why it ended (OOMKilled under gVisor): another sweep must not remove it first.
    const labels = buildLabels({ managerId: "other", deadline: future });
    const justEnded = new Date(now.getTime() - 1000);
    expect(sweepReason(live(labels, "exited"), { now, finishedAt: justEnded })).toBeUndefined();
    expect(sweepReason(live(labels, "dead"), { now, finishedAt: justEnded })).toBeUndefined();
    const graceOver = new Date(justEnded.getTime() + stoppedGraceMs);
    expect(sweepReason(live(labels, "exited"), { now: graceOver, finishedAt: justEnded })).toBe(
      "it is exited",
    );
    // Not for an owner that is gone, nor past the deadline.
    const orphan = { ...labels, [labelKeys.ownerPid]: "99999999" };
    expect(sweepReason(live(orphan, "exited"), { now, finishedAt: justEnded })).toBe("it is exited");
    const late = buildLabels({ managerId: "other", deadline: new Date(now.getTime() - 1000) });
    expect(sweepReason(live(late, "exited"), { now, finishedAt: justEnded })).toBe("it is exited");
  });
  it("leaves containers whose owner it cannot judge (another machine) to their deadline", () => {
    const labels = buildLabels({ managerId: "other", deadline: future });
    const elsewhere = {
      ...labels,
      [labelKeys.bootId]: "another-boot",
      [labelKeys.ownerHost]: "another-host",
      [labelKeys.ownerPid]: "99999999",
    };
    expect(sweepReason(live(elsewhere), { now })).toBeUndefined();
    expect(currentOwner().pid).toBe(process.pid);
  });
  it("ignores containers that are not managed", () => {
    expect(sweepReason(live({ other: "label" }, "exited"), { now })).toBeUndefined();
  });
});

/** An engine holding one container of a dead owner, which ends by itself after `runningInspects` inspects. */
function orphanEngine(state: string, runningInspects: number) {
  const calls: string[] = [];
  const labels = { ...buildLabels({ managerId: "other", deadline: new Date(Date.now() + 60_000) }) };
  labels[labelKeys.ownerPid] = "99999999";
  let inspects = 0;
  const engine = {
    listContainers: async () => [{ Id: "c1", State: state, Labels: labels, Created: Date.now() / 1000 }],
    getContainer: () => ({
      inspect: async () => {
        inspects += 1;
        const running = inspects <= runningInspects;
        calls.push(`inspect ${running ? "running" : "exited"}`);
        return { State: { Running: running } };
      },
      remove: async () => {
        calls.push("remove");
      },
    }),
  } as unknown as ContainerEngine;
  return { engine, calls };
}

describe("sweepContainers", () => {
  it("gives a running container whose owner is gone time to end by its lifeline before removing it", async () => {
    const { engine, calls } = orphanEngine("running", 2);
    const swept = await sweepContainers(engine);
    expect(swept).toEqual([{ containerId: "c1", reason: "its owner process 99999999 is gone" }]);
    // No removal (the engine's "kill") while it still ran: it ended first, by itself.
    expect(calls).toEqual(["inspect running", "inspect running", "inspect exited", "remove"]);
  });

  it("removes one still running after the grace, and a stopped one at once", async () => {
    const stuck = orphanEngine("running", Number.POSITIVE_INFINITY);
    await sweepContainers(stuck.engine, { ownerGoneGraceMs: 400 });
    expect(stuck.calls.at(-1)).toBe("remove");
    expect(stuck.calls.filter((call) => call === "inspect running")).toHaveLength(2);
    const stopped = orphanEngine("exited", 0);
    await sweepContainers(stopped.engine);
    expect(stopped.calls).toEqual(["remove"]);
  });

  it("asks when a live owner's stopped container ended: keeps one just ended, removes one ended long ago", async () => {
    const labels = buildLabels({ managerId: "other", deadline: new Date(Date.now() + 600_000) });
    const engineEnded = (finishedAt: Date) => {
      const calls: string[] = [];
      const engine = {
        listContainers: async () => [
          { Id: "c1", State: "exited", Labels: labels, Created: Date.now() / 1000 },
        ],
        getContainer: () => ({
          inspect: async () => {
            calls.push("inspect");
            return { State: { Running: false, FinishedAt: finishedAt.toISOString() } };
          },
          remove: async () => {
            calls.push("remove");
          },
        }),
      } as unknown as ContainerEngine;
      return { engine, calls };
    };
    const fresh = engineEnded(new Date(Date.now() - 1000));
    expect(await sweepContainers(fresh.engine)).toEqual([]);
    expect(fresh.calls).toEqual(["inspect"]);
    const old = engineEnded(new Date(Date.now() - stoppedGraceMs - 1000));
    expect(await sweepContainers(old.engine)).toEqual([{ containerId: "c1", reason: "it is exited" }]);
    expect(old.calls).toEqual(["inspect", "remove"]);
  });
});
