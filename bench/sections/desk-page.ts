import { measureDeskPage } from "../desk-page.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only desk-page`. */
export async function deskPageSection(context: SectionContext): Promise<void> {
  const { plan, progress, installedBin, figure, ratio } = context;
  const section = "analyst's desk page: one question (runc)";
  const samples = await measureDeskPage({
    bin: await installedBin(),
    rounds: plan.deskPageRounds,
    onProgress: progress,
  });
  const page = figure(
    section,
    '(m) codeaction desk in chromium: "Ask" clicked to the table rendered',
    samples.page,
    "ms",
    "the seed question over orders.csv, replayed; the desk already running",
  );
  const ask = figure(section, "(n) codeaction ask, same replay, as a process: wall", samples.ask);
  ratio(section, "(m)/(n) at p50", page.p50 / ask.p50, { text: "<= 1.3", met: page.p50 / ask.p50 <= 1.3 });
}
