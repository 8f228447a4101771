import type { Logger } from "pino";
import { deadlineOf, labelKeys, ownerStatus } from "../container/labels.ts";
import type { ContainerEngine } from "../engine/container-engine.ts";
import { statusCodeOf } from "../engine/engine-operations.ts";

export type SweptNetwork = { networkId: string; name: string; reason: string };

/**
 * Removes the session networks (and any other labelled network) whose owner is gone or whose deadline
 * passed, never another live manager's. Run it after the container sweep: a network with a container
 * still on it cannot be removed and waits for the next sweep.
 */
export async function sweepNetworks(
  docker: ContainerEngine,
  options: { ownManagerId?: string; logger?: Logger; now?: Date } = {},
): Promise<SweptNetwork[]> {
  const networks = await docker.listNetworks({ filters: { label: [`${labelKeys.managed}=true`] } });
  const now = options.now ?? new Date();
  const swept: SweptNetwork[] = [];
  for (const network of networks) {
    const labels = network.Labels ?? {};
    if (options.ownManagerId && labels[labelKeys.managerId] === options.ownManagerId) continue;
    const deadline = deadlineOf(labels);
    const reason =
      deadline && deadline.getTime() <= now.getTime()
        ? `its deadline ${deadline.toISOString()} passed`
        : ownerStatus(labels) === "gone"
          ? `its owner process ${labels[labelKeys.ownerPid]} is gone`
          : undefined;
    if (!reason) continue;
    try {
      await docker.getNetwork(network.Id).remove();
      swept.push({ networkId: network.Id, name: network.Name, reason });
      options.logger?.info({ network: network.Name, reason }, "swept a sandbox network");
    } catch (error) {
      const status = statusCodeOf(error);
      if (status !== 404)
        options.logger?.debug({ network: network.Name, status }, "network still in use; next sweep");
    }
  }
  return swept;
}
