import { type DeskSample, measureDesk } from "../desk.ts";
import type { SectionContext } from "./section.ts";

/** `pnpm bench --only desk`. */
export async function deskSection(context: SectionContext): Promise<void> {
  const { plan, progress, installedBin, figure, ratio } = context;
  const section = "analyst's desk: 1,000,000-row CSV (runc)";
  const samples = await measureDesk({
    bin: await installedBin(),
    rounds: plan.deskRounds,
    rows: 1_000_000,
    onProgress: progress,
  });
  const size = `${(samples.fileBytes / 1e6).toFixed(0)} MB, pandas read_csv + Q3 group-by`;
  const wall = (list: DeskSample[]) => list.map((sample) => sample.wallMs);
  const mebibytes = (list: DeskSample[], key: "programPeakKiB" | "hostPeakKiB") =>
    list.map((sample) => sample[key] / 1024);
  const ask = figure(
    section,
    "(j) codeaction ask --data --csv, replayed pandas program: wall",
    wall(samples.ask),
    "ms",
    `${size}; the CLI installed from the packed tarballs`,
  );
  const dockerRun = figure(
    section,
    "(k) plain docker run of the data image, same program: wall",
    wall(samples.dockerRun),
  );
  const host = figure(
    section,
    "(l) python3 + pandas on the host, same program (the floor): wall",
    wall(samples.host),
  );
  ratio(section, "(j)/(l) at p50", ask.p50 / host.p50, { text: "<= 2", met: ask.p50 / host.p50 <= 2 });
  ratio(section, "(j)/(k) at p50", ask.p50 / dockerRun.p50, undefined, "our cost over a bare container");
  const askProgram = figure(
    section,
    "(j) pandas process peak RSS, in the sandbox",
    mebibytes(samples.ask, "programPeakKiB"),
    "MiB",
  );
  const hostProgram = figure(
    section,
    "(l) pandas process peak RSS, on the host",
    mebibytes(samples.host, "programPeakKiB"),
    "MiB",
  );
  ratio(section, "(j)/(l) pandas peak RSS at p50", askProgram.p50 / hostProgram.p50);
  figure(
    section,
    "(j) codeaction CLI process peak RSS (host)",
    mebibytes(samples.ask, "hostPeakKiB"),
    "MiB",
    "the file streams through it into the container",
  );
}
