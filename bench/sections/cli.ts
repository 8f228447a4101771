import { measureCliAsk } from "../cli-ask.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only cli`. */
export async function cliSection(context: SectionContext): Promise<void> {
  const { docker, plan, progress, installedBin, figure, ratio } = context;
  const section = "CLI single turn (runc)";
  const samples = await measureCliAsk({
    docker,
    bin: await installedBin(),
    rounds: plan.cliRounds,
    onProgress: progress,
  });
  const ask = figure(
    section,
    "(g) codeaction ask, replayed model: wall",
    samples.ask,
    "ms",
    "g and h: the CLI installed from the packed tarballs",
  );
  const sandboxRun = figure(section, "(h) codeaction sandbox run, same program: wall", samples.sandboxRun);
  const start = figure(section, "(i) container start alone, in process", samples.containerStart);
  ratio(section, "(g)/(h) at p50", ask.p50 / sandboxRun.p50, {
    text: "<= 1.3",
    met: ask.p50 / sandboxRun.p50 <= 1.3,
  });
  ratio(
    section,
    "(g)/(i) at p50",
    ask.p50 / start.p50,
    undefined,
    "includes Node start-up and module loading",
  );
}
