import { measureTurnOverhead } from "../turn-overhead.ts";
import type { SectionContext } from "./section.ts";

/**
 * The turn overhead on `backend`, one figure a variant: (b) the cold path, (c) the default
 * configuration, (d) a pool, and on runc (a) the seed's `docker run --rm -i` runner.
 */
export async function turnFigures(context: SectionContext, backend: "docker" | "gvisor") {
  const { docker, plan, poolSize, progress, figure } = context;
  const gvisor = backend === "gvisor";
  const section = `turn overhead (${gvisor ? "gVisor" : "runc"})`;
  const suffix = gvisor ? ", gVisor" : "";
  const samples = await measureTurnOverhead({
    docker,
    rounds: gvisor ? plan.gvisorRounds : plan.turnRounds,
    backend,
    includeSeed: !gvisor,
    poolSize,
    onProgress: progress,
  });
  const seed = gvisor ? undefined : figure(section, "(a) seed runner: docker run --rm -i", samples.seed!);
  const cold = figure(section, `(b) ours, cold path (pool: 0)${suffix}`, samples.cold!);
  const defaults = figure(section, `(c) ours, default configuration${suffix}`, samples.default!);
  const pooled = figure(section, `(d) ours, pool ${poolSize}${suffix}`, samples.pooled!);
  return { section, seed, cold, defaults, pooled };
}

/** `pnpm bench --only turn`. */
export async function turnSection(context: SectionContext): Promise<void> {
  const { ratio, rows } = context;
  const { section, seed, cold, defaults, pooled } = await turnFigures(context, "docker");
  ratio(section, "(a)/(b) at p50", seed!.p50 / cold.p50, {
    text: ">= 1.2",
    met: seed!.p50 / cold.p50 >= 1.2,
  });
  ratio(section, "(c)/(d) at p50", defaults.p50 / pooled.p50, {
    text: "<= 1.5",
    met: defaults.p50 / pooled.p50 <= 1.5,
  });
  ratio(section, "(a)/(d) at p50", seed!.p50 / pooled.p50, {
    text: ">= 4",
    met: seed!.p50 / pooled.p50 >= 4,
  });
  rows.push({
    section,
    figure: "(d) p50",
    p50: pooled.p50,
    unit: "ms",
    target: "< 150",
    met: pooled.p50 < 150,
  });
}
