import { measureSamples } from "../samples.ts";
import { summarize } from "../stats.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only samples`. */
export async function samplesSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, figure, ratio, rows, raw } = context;
  const section = "samples (pool 2)";
  const samples = await measureSamples({ docker, rounds: plan.samplesRounds, onProgress: progress });
  const one = figure(section, "samples: 1", samples.one);
  const two = figure(section, "samples: 2", samples.two);
  ratio(section, "samples 2 / samples 1 at p50", two.p50 / one.p50, {
    text: "near 1 (< 1.5)",
    met: two.p50 / one.p50 < 1.5,
  });
  const overlap = summarize(samples.overlap);
  raw[`${section}: overlap`] = overlap;
  rows.push({
    section,
    figure: "samples 2: sum of sample times / turn time",
    p50: overlap.p50,
    p95: overlap.p95,
    unit: "x",
    count: overlap.count,
    note: "2 = fully concurrent, 1 = one after the other",
  });
  const slowest = summarize(samples.slowest);
  raw[`${section}: turn / slowest sample`] = slowest;
  rows.push({
    section,
    figure: "samples 2: turn time / its slowest sample's time",
    p50: slowest.p50,
    p95: slowest.p95,
    unit: "x",
    count: slowest.count,
    target: "about 1",
    met: slowest.p50 < 1.3,
    note: "near 1 when the samples run at once; near 2 when one waits for the other",
  });
}
