import { measureIdleMemory } from "../idle-memory.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only idle`. */
export async function idleSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, figure } = context;
  const section = "idle agent, default pool (runc)";
  const idleSeconds = 5;
  const samples = await measureIdleMemory({
    docker,
    rounds: plan.idleRounds,
    idleSeconds,
    onProgress: progress,
  });
  const mebibytes = (values: number[]) => values.map((value) => value / 1024 ** 2);
  figure(section, "warm container: memory cgroup", mebibytes(samples.containerBytes), "MiB");
  figure(
    section,
    "host memory held, warm",
    mebibytes(samples.hostHeldBytes),
    "MiB",
    "MemAvailable drop from before the build (noisy: shared machine)",
  );
  figure(
    section,
    `host memory held after the idle drain (poolIdleSeconds ${idleSeconds})`,
    mebibytes(samples.hostAfterDrainBytes),
    "MiB",
    "the agent still alive, its pool asleep",
  );
}
