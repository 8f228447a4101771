import { measureHttpFloods } from "../http-floods.ts";
import { round } from "../stats.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only floods` (also run by `hostile`). */
export async function floodsSection(context: SectionContext): Promise<void> {
  const { docker, progress, rows, raw } = context;
  // The HTTP floods of issue 29 finding 3 against `codeaction mcp --http` (a process per flood):
  // goal, the server's peak RSS (VmHWM) under 256 MiB above what it held serving, before the flood.
  const section = "hostile HTTP clients (codeaction mcp --http, runc)";
  const floods = await measureHttpFloods({ docker, onProgress: progress });
  raw.httpFloods = floods;
  for (const flood of floods) {
    const peak = flood.peakBytes / 1024 ** 2;
    const growth = (flood.peakBytes - flood.baselineBytes) / 1024 ** 2;
    const statuses = Object.entries(flood.statuses)
      .map(([status, count]) => `${count}x ${status}`)
      .join(", ");
    rows.push({
      section,
      figure: `${flood.flood}: server peak RSS growth`,
      p50: growth,
      unit: "MiB",
      target: "< 256",
      met: growth < 256,
      note: `${flood.runs} runs; ${statuses || "answers unread"}${flood.refusedRuns ? `; ${flood.refusedRuns} runs refused by a cap` : ""}; ${round(flood.wallSeconds)} s`,
    });
    rows.push({
      section,
      figure: `${flood.flood}: server peak RSS (VmHWM)`,
      p50: peak,
      unit: "MiB",
      note: `from ${round(flood.baselineBytes / 1024 ** 2)} MiB serving, before the flood`,
    });
  }
}
