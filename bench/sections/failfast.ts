import { measureFailFast } from "../fail-fast.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only failfast`. */
export async function failfastSection(context: SectionContext): Promise<void> {
  const { plan, progress, figure, rows } = context;
  // The bounds the security tests once asserted (issue 36): refusals and deadlines, timed here.
  const section = "failing closed and deadlines (runc)";
  const samples = await measureFailFast({ rounds: plan.failFastRounds, onProgress: progress });
  const bounded = (name: string, values: number[], bound: number, note?: string) => {
    const summary = figure(section, name, values, "ms", note);
    rows.push({
      section,
      figure: `${name}: p95`,
      p50: summary.p95,
      unit: "ms",
      target: `< ${bound}`,
      met: summary.p95 < bound,
    });
  };
  bounded("runsc not registered: ready() refuses", samples.runtimeRefusalMs, 2000);
  bounded("missing socket: ready() refuses", samples.socketRefusalMs, 2000);
  bounded(
    "buildAgent, DOCKER_HOST at a missing socket",
    samples.buildAgentRefusalMs,
    2000,
    "in its own process",
  );
  bounded("example.invalid fails to resolve, in the sandbox", samples.dnsFailureMs, 1000);
  bounded("time.sleep past execTimeout 2 s: run time beyond 2 s", samples.deadlineOverrunMs, 10_000);
  bounded("longest event-loop stall, 1,000 bridged calls", samples.eventLoopStallMs, 1000);
}
