import { type DeskSample, measureDesk } from "../desk.ts";
import { deskPhases } from "../desk-breakdown.ts";
import { measureLibraryWays } from "../desk-library.ts";
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
  const copied = figure(
    section,
    "(j0) the same, the file named through a link: copied, not mounted (the way before issue 46): wall",
    wall(samples.askCopied),
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
  // Issue 46's acceptance, on an idle machine.
  ratio(section, "(j)/(l) at p50", ask.p50 / host.p50, { text: "<= 1.5", met: ask.p50 / host.p50 <= 1.5 });
  ratio(
    section,
    "(j)/(k) at p50",
    ask.p50 / dockerRun.p50,
    { text: "<= 1.3", met: ask.p50 / dockerRun.p50 <= 1.3 },
    "our cost over a bare container",
  );
  ratio(section, "(j0)/(l) at p50", copied.p50 / host.p50, undefined, "copied, as before issue 46");
  // The first question phase by phase (ask --debug's lines: bench/desk-breakdown.ts), mounted and copied.
  for (const phase of deskPhases) {
    const of = (list: DeskSample[]) => list.map((sample) => sample.phasesMs?.[phase] ?? 0);
    figure(section, `(j) phase: ${phase}`, of(samples.ask));
    figure(section, `(j0) phase: ${phase}`, of(samples.askCopied));
  }
  // Its share of the data file checks: the scan for the prompt (the typing sample, the row count).
  const scans = (list: DeskSample[]) => list.map((sample) => sample.scanMs ?? 0);
  figure(
    section,
    "(j) the data file's scan, its own time (overlaps CLI start and container)",
    scans(samples.ask),
  );
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
    "the file is mounted: it no longer streams through the CLI",
  );
  figure(
    section,
    "(j0) codeaction CLI process peak RSS (host), the file copied",
    mebibytes(samples.askCopied, "hostPeakKiB"),
    "MiB",
    "the file streams through the prelaunch's worker into the container",
  );
  // The library: a container started for the request mounts the file; a warm pool's copies it.
  const library = await measureLibraryWays({
    rounds: plan.deskRounds,
    rows: 1_000_000,
    onProgress: progress,
  });
  const librarySection = "analyst's desk, the library: 1,000,000-row CSV (runc)";
  const note = "createSession, placeFiles, the pandas program (execute)";
  const mounted = figure(
    librarySection,
    "(m) a container of its own, the file mounted",
    library.coldMounted,
    "ms",
    note,
  );
  figure(
    librarySection,
    "(m0) a container of its own, the file copied (named through a link)",
    library.coldCopied,
  );
  const pool = figure(
    librarySection,
    "(n) the warm pool's container, the file copied (poolCopyLimit 1T)",
    library.poolCopied,
  );
  ratio(
    librarySection,
    "(n)/(m) at p50",
    pool.p50 / mounted.p50,
    undefined,
    "a warm container cannot gain a mount; above 1, past poolCopyLimit (32M) is rightly (m)",
  );
}
