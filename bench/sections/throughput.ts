import { round } from "../stats.ts";
import { measureThroughput } from "../throughput.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only throughput`. */
export async function throughputSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, ratio, rows, raw } = context;
  const section = "throughput (pool 4, maxConcurrent 8)";
  const result = await measureThroughput({
    docker,
    sequential: plan.sequential,
    concurrent: plan.concurrent,
    queued: plan.queued,
    poolSize: 4,
    maxConcurrent: 8,
    onProgress: progress,
  });
  raw[section] = result;
  for (const [name, phase] of [
    [`${plan.sequential} one after another`, result.sequential],
    [`${plan.concurrent} concurrent`, result.concurrent],
    [`${plan.queued} started at once (queued)`, result.queued],
  ] as const) {
    rows.push({
      section,
      figure: `${name}: runs/min`,
      p50: phase.runsPerMinute,
      unit: "runs/min",
      count: phase.turns,
      target: "all succeed",
      met: phase.succeeded === phase.turns,
      note: `${phase.succeeded}/${phase.turns} ok, ${round(phase.elapsedMs / 1000)} s, peak ${phase.peakLiveContainers} live`,
    });
  }
  ratio(
    section,
    `${plan.concurrent} concurrent / one after another`,
    result.concurrent.runsPerMinute / result.sequential.runsPerMinute,
  );
  ratio(
    section,
    `${plan.queued} queued / one after another`,
    result.queued.runsPerMinute / result.sequential.runsPerMinute,
  );
  rows.push({
    section,
    figure: "container memory per live run",
    p50: result.containerMemoryPerLiveRunBytes / 1024 ** 2,
    unit: "MiB",
    note: "memory cgroup usage, mean while the concurrent turns ran",
  });
  rows.push({
    section,
    figure: "host memory per live run",
    p50: result.hostMemoryPerLiveRunBytes / 1024 ** 2,
    unit: "MiB",
    note: "MemAvailable drop / containers added over the warm pool (noisy: shared machine)",
  });
}
