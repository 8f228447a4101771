import type Dockerode from "dockerode";
import { scriptedAgent } from "./agents.ts";
import { containerMemoryBytes, hostAvailableBytes, ownContainers, settle } from "./docker-state.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type IdleMemorySamples = {
  /** MemAvailable drop from before the agent was built to its warm container being ready. */
  hostHeldBytes: number[];
  /** The warm container's memory cgroup usage. */
  containerBytes: number[];
  /** MemAvailable drop from before the build to after the idle drain (the agent still alive). */
  hostAfterDrainBytes: number[];
};

/**
 * What an idle agent with the default warm pool holds: an agent built with only `poolIdleSeconds`
 * shortened, measured when its one warm container is ready and again after the idle drain removed
 * it. MemAvailable is host-wide: other work on the machine moves it too.
 */
export async function measureIdleMemory(options: {
  docker: Dockerode;
  rounds: number;
  idleSeconds: number;
  onProgress?: (message: string) => void;
}): Promise<IdleMemorySamples> {
  const samples: IdleMemorySamples = { hostHeldBytes: [], containerBytes: [], hostAfterDrainBytes: [] };
  for (let round = 1; round <= options.rounds; round += 1) {
    await settle(options.docker, { expected: 0 });
    const before = await hostAvailableBytes();
    const agent = await scriptedAgent({
      program: overheadProgram,
      replies: 1,
      sandbox: { poolIdleSeconds: options.idleSeconds },
    });
    try {
      if (!(await settle(options.docker, { expected: 1 })))
        throw new Error("the warm container never got ready");
      samples.hostHeldBytes.push(before - (await hostAvailableBytes()));
      const [warm] = await ownContainers(options.docker);
      const used = warm ? await containerMemoryBytes(warm.Id) : undefined;
      if (used !== undefined) samples.containerBytes.push(used);
      const drained = await settle(options.docker, {
        expected: 0,
        timeoutMs: (options.idleSeconds + 30) * 1000,
      });
      if (!drained) throw new Error("the idle drain did not remove the warm container");
      samples.hostAfterDrainBytes.push(before - (await hostAvailableBytes()));
    } finally {
      await agent.close();
    }
    options.onProgress?.(`idle memory round ${round}/${options.rounds}`);
  }
  return samples;
}
