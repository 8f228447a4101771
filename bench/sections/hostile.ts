import { measureHostile } from "../hostile.ts";
import { round } from "../stats.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only hostile`. */
export async function hostileSection(context: SectionContext): Promise<void> {
  const { docker, progress, rows, raw } = context;
  // Each attack class of issue 18 through a real turn; goals per run: host RSS growth < 64 MiB, CPU
  // < execTimeout's seconds, 0 bytes on disk under Docker's data root.
  const execTimeout = 30;
  const runs = await measureHostile({
    docker,
    execTimeout,
    backends: ["docker", "gvisor"],
    onProgress: progress,
  });
  raw.hostile = runs;
  for (const hostile of runs) {
    const section = `hostile run (${hostile.backend === "docker" ? "runc" : "gVisor"}), execTimeout ${execTimeout} s`;
    const note = `${hostile.status}, ${round(hostile.wallSeconds)} s`;
    const mebibytes = hostile.rssGrowthBytes / 1024 ** 2;
    rows.push({
      section,
      figure: `${hostile.attack}: host peak RSS growth`,
      p50: mebibytes,
      unit: "MiB",
      target: "< 64",
      met: mebibytes < 64,
      note,
    });
    rows.push({
      section,
      figure: `${hostile.attack}: host CPU`,
      p50: hostile.cpuSeconds,
      unit: "s",
      target: `< ${execTimeout}`,
      met: hostile.cpuSeconds < execTimeout,
    });
    if (hostile.attack === "output collection for the worst tree") {
      rows.push({
        section,
        figure: `${hostile.attack}: reading back /workspace/out`,
        p50: hostile.collectSeconds,
        unit: "s",
        target: "< 5",
        met: hostile.collectSeconds < 5,
        note: "one exec; an upper bound (the attempt's host time outside model, start and run)",
      });
    }
    rows.push({
      section,
      figure: `${hostile.attack}: bytes on disk`,
      p50: hostile.diskBytes,
      unit: "B",
      target: "0",
      met: hostile.diskBytes === 0,
      note: `${hostile.containersSeen} container(s) watched`,
    });
  }
}
