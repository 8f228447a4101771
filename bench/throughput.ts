import type Dockerode from "dockerode";
import { question, scriptedAgent } from "./agents.ts";
import { containerMemoryBytes, hostAvailableBytes, ownContainers, settle } from "./docker-state.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type ThroughputPhase = {
  turns: number;
  succeeded: number;
  elapsedMs: number;
  runsPerMinute: number;
  peakLiveContainers: number;
};

export type ThroughputResult = {
  sequential: ThroughputPhase;
  concurrent: ThroughputPhase;
  queued: ThroughputPhase;
  /** Mean of the containers' memory cgroup usage, sampled while the concurrent turns ran. */
  containerMemoryPerLiveRunBytes: number;
  /** Host MemAvailable before the concurrent turns minus its lowest value during them, per peak live container. */
  hostMemoryPerLiveRunBytes: number;
};

/**
 * Turns at once on one agent (pool 4, maxConcurrent 8): `sequential` one after the other (the
 * baseline), `concurrent` all started together, `queued` more than maxConcurrent started together
 * (the rest wait in line). Every turn must succeed.
 */
export async function measureThroughput(options: {
  docker: Dockerode;
  sequential: number;
  concurrent: number;
  queued: number;
  poolSize: number;
  maxConcurrent: number;
  onProgress?: (message: string) => void;
}): Promise<ThroughputResult> {
  const agent = await scriptedAgent({
    program: overheadProgram,
    replies: options.sequential + options.concurrent + options.queued + 1,
    sandbox: { pool: options.poolSize, maxConcurrent: options.maxConcurrent },
  });
  let peak = 0;
  let memorySamples: number[] = [];
  let lowestAvailable = Number.POSITIVE_INFINITY;
  let sampling = false;
  const sampler = async () => {
    while (sampling) {
      const live = (await ownContainers(options.docker)).filter((container) => container.State === "running");
      peak = Math.max(peak, live.length);
      const usages = await Promise.all(live.map((container) => containerMemoryBytes(container.Id)));
      for (const usage of usages) if (usage !== undefined) memorySamples.push(usage);
      lowestAvailable = Math.min(lowestAvailable, await hostAvailableBytes());
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const phase = async (turns: number, together: boolean): Promise<ThroughputPhase> => {
    await settle(options.docker, { expected: options.poolSize });
    peak = 0;
    sampling = true;
    const sampling$ = sampler();
    const started = performance.now();
    let succeeded = 0;
    const one = async () => {
      const result = await agent.invoke(question);
      if (result.status === "answered" && result.answer === "1") succeeded += 1;
    };
    if (together) {
      await Promise.all(Array.from({ length: turns }, one));
    } else {
      for (let turn = 0; turn < turns; turn += 1) await one();
    }
    const elapsedMs = performance.now() - started;
    sampling = false;
    await sampling$;
    return {
      turns,
      succeeded,
      elapsedMs,
      runsPerMinute: (succeeded / elapsedMs) * 60_000,
      peakLiveContainers: peak,
    };
  };
  try {
    await agent.invoke(question);
    const sequential = await phase(options.sequential, false);
    options.onProgress?.("throughput: sequential done");
    await settle(options.docker, { expected: options.poolSize });
    const availableBefore = await hostAvailableBytes();
    memorySamples = [];
    lowestAvailable = Number.POSITIVE_INFINITY;
    const concurrent = await phase(options.concurrent, true);
    const containerMemory =
      memorySamples.reduce((total, value) => total + value, 0) / Math.max(1, memorySamples.length);
    // The baseline already holds the warm pool's containers: divide by the containers added since.
    const addedContainers = concurrent.peakLiveContainers - options.poolSize;
    const hostMemory = (availableBefore - lowestAvailable) / Math.max(1, addedContainers);
    options.onProgress?.("throughput: concurrent done");
    const queued = await phase(options.queued, true);
    options.onProgress?.("throughput: queued done");
    return {
      sequential,
      concurrent,
      queued,
      containerMemoryPerLiveRunBytes: containerMemory,
      hostMemoryPerLiveRunBytes: hostMemory,
    };
  } finally {
    await agent.close();
  }
}
