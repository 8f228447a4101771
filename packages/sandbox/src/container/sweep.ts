import type { Logger } from "pino";
import type { ContainerEngine, ContainerSummary, EngineContainer } from "../engine/container-engine.ts";
import { removeContainer, statusCodeOf } from "../engine/engine-operations.ts";
import { deadlineOf, labelKeys, ownerStatus } from "./labels.ts";

export type SweptContainer = { containerId: string; reason: string };

/** How long a created-but-never-started container may wait for its (live) owner to start it. */
const createdGraceMs = 5 * 60 * 1000;

/**
 * How long past its deadline a running container of a live owner is left to its own PID 1, which
 * ends it at the deadline (init.ts). The sweep is the backstop for an init that could not (gVisor
 * delivers in-container signals to PID 1, so a program can freeze it): before this grace, a sweep
 * racing the init would be the one ending a container that was about to end itself, and a test
 * proving that the init holds its deadline would see another file's sweep instead.
 */
export const deadlineGraceMs = 60 * 1000;

/**
 * How long a stopped container of an owner that may still live is left to that owner, before its
 * deadline: the owner reads why it ended (the engine's OOMKilled, under gVisor the only word of an
 * out-of-memory end) and replaces it. Removing it at once would race that read, and another
 * process's sweep would turn an out-of-memory end into an unexplained one.
 */
export const stoppedGraceMs = 60 * 1000;

/**
 * Why a managed container should go, or undefined when it must stay. Never reaps a live owner's
 * running container before its deadline: only stopped containers, passed deadlines, and owners that
 * are provably gone (same kernel boot and pid namespace, and the pid is gone or was reused). A
 * stopped container of an owner not provably gone, whose deadline has not passed, stays
 * `stoppedGraceMs` after `finishedAt` (its inspect's State.FinishedAt) when that is given.
 */
export function sweepReason(
  summary: Pick<ContainerSummary, "State" | "Labels" | "Created">,
  options: { now?: Date; ownManagerId?: string; finishedAt?: Date } = {},
): string | undefined {
  const labels = summary.Labels ?? {};
  if (labels[labelKeys.managed] !== "true") return undefined;
  if (options.ownManagerId && labels[labelKeys.managerId] === options.ownManagerId) return undefined;
  const now = options.now ?? new Date();
  const state = summary.State;
  const owner = ownerStatus(labels);
  const deadline = deadlineOf(labels);
  if (state === "exited" || state === "dead") {
    const leftToOwner =
      owner !== "gone" &&
      options.finishedAt !== undefined &&
      options.finishedAt.getTime() + stoppedGraceMs > now.getTime() &&
      (deadline === undefined || deadline.getTime() > now.getTime());
    return leftToOwner ? undefined : `it is ${state}`;
  }
  if (owner === "gone") return `its owner process ${labels[labelKeys.ownerPid]} is gone`;
  const grace = state === "running" ? deadlineGraceMs : 0;
  if (deadline && deadline.getTime() + grace <= now.getTime()) {
    return `its deadline ${deadline.toISOString()} passed`;
  }
  if (state === "created" && now.getTime() - summary.Created * 1000 > createdGraceMs) {
    return "it was created and never started";
  }
  return undefined;
}

/**
 * How long a running container whose owner is gone is given to end by itself before the sweep
 * removes it: its lifeline closed with the owner, and its PID 1 then ends it within a second
 * (init.ts). Removing it at once would race that, and a test proving the lifeline would see another
 * file's sweep end the container instead. A container still running after this is removed.
 */
export const ownerGoneGraceMs = 3000;

/** Resolves once the container is not running (or gone), or after `graceMs`. */
async function endedBySelf(container: EngineContainer, graceMs: number): Promise<void> {
  for (let waited = 0; waited < graceMs; waited += 200) {
    const running = await container.inspect().then(
      (info) => info.State.Running === true,
      (error: unknown) => (statusCodeOf(error) === 404 ? false : Promise.reject(error)),
    );
    if (!running) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** When a stopped container ended (State.FinishedAt), or undefined when it is gone or never ran. */
async function finishedAtOf(container: EngineContainer): Promise<Date | "gone" | undefined> {
  const info = await container.inspect().catch((error: unknown) => {
    if (statusCodeOf(error) === 404) return "gone" as const;
    throw error;
  });
  if (info === "gone") return "gone";
  const finishedAt = new Date(info.State.FinishedAt);
  return Number.isNaN(finishedAt.getTime()) ? undefined : finishedAt;
}

/**
 * Removes every managed container that sweepReason condemns, a stopped one only after reading when
 * it ended (see stoppedGraceMs). Returns what was removed and why.
 */
export async function sweepContainers(
  docker: ContainerEngine,
  options: { ownManagerId?: string; logger?: Logger; ownerGoneGraceMs?: number } = {},
): Promise<SweptContainer[]> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${labelKeys.managed}=true`] },
  });
  const swept: SweptContainer[] = [];
  await Promise.all(
    containers.map(async (summary) => {
      const own = options.ownManagerId ? { ownManagerId: options.ownManagerId } : {};
      let reason = sweepReason(summary, own);
      if (!reason) return;
      const container = docker.getContainer(summary.Id);
      // A stopped container that would stay had it just ended: ask the engine when it ended.
      if (!sweepReason(summary, { ...own, finishedAt: new Date() })) {
        const finishedAt = await finishedAtOf(container);
        if (finishedAt === "gone") return;
        reason = sweepReason(summary, finishedAt ? { ...own, finishedAt } : own);
        if (!reason) return;
      }
      if (summary.State === "running" && ownerStatus(summary.Labels ?? {}) === "gone") {
        await endedBySelf(container, options.ownerGoneGraceMs ?? ownerGoneGraceMs);
      }
      await removeContainer(container);
      swept.push({ containerId: summary.Id, reason });
      options.logger?.info({ containerId: summary.Id.slice(0, 12), reason }, "swept a sandbox container");
    }),
  );
  return swept;
}
