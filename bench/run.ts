// `pnpm bench`: runs the sections (bench/sections/, one file each), prints one table and writes the
// same figures as JSON to bench/results/. Every figure that has a target is a ratio of variants
// measured side by side in this run, interleaved. `pnpm bench --help` lists the flags.
import { mkdir, writeFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectDocker } from "@codeaction/sandbox";
import { type InstalledCli, installCli } from "./installed-cli.ts";
import { describeMachine } from "./machine.ts";
import { callsSection } from "./sections/calls.ts";
import { cliSection } from "./sections/cli.ts";
import { coldSection } from "./sections/cold.ts";
import { deskSection } from "./sections/desk.ts";
import { deskPageSection } from "./sections/desk-page.ts";
import { failfastSection } from "./sections/failfast.ts";
import { floodsSection } from "./sections/floods.ts";
import { gvisorSection } from "./sections/gvisor.ts";
import { hostileSection } from "./sections/hostile.ts";
import { idleSection } from "./sections/idle.ts";
import { remoteSection } from "./sections/remote.ts";
import { samplesSection } from "./sections/samples.ts";
import { createReport, plans, type SectionContext } from "./sections/section.ts";
import { stateSection } from "./sections/state.ts";
import { throughputSection } from "./sections/throughput.ts";
import { turnSection } from "./sections/turn.ts";
import { uploadsSection } from "./sections/uploads.ts";
import { round } from "./stats.ts";
import { renderTable } from "./table.ts";

/** The sections in the order they run; each runs when `--only` names one of its names (or without `--only`). */
const sections: Array<{ names: string[]; run: (context: SectionContext) => Promise<void> }> = [
  { names: ["turn"], run: turnSection },
  { names: ["cold"], run: coldSection },
  { names: ["gvisor"], run: gvisorSection },
  { names: ["cli"], run: cliSection },
  { names: ["idle"], run: idleSection },
  { names: ["calls"], run: callsSection },
  { names: ["remote"], run: remoteSection },
  { names: ["throughput"], run: throughputSection },
  { names: ["samples"], run: samplesSection },
  { names: ["desk-page"], run: deskPageSection },
  { names: ["desk"], run: deskSection },
  { names: ["state"], run: stateSection },
  { names: ["hostile"], run: hostileSection },
  { names: ["hostile", "floods"], run: floodsSection },
  { names: ["failfast"], run: failfastSection },
  { names: ["uploads"], run: uploadsSection },
];
const sectionNames = [...new Set(sections.flatMap((section) => section.names))];

const usage = `Usage: pnpm bench [--quick] [--only SECTION,...]

  --quick          a smoke run: fewer rounds (the figures go to bench/results/quick.json)
  --only SECTIONS  only these sections, comma-separated: ${sectionNames.join(",")}
                   (floods alone runs the HTTP floods of hostile; results go to quick.json)
  -h, --help       show this help`;

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const quick = process.argv.includes("--quick");
const onlyIndex = process.argv.indexOf("--only");
const only = onlyIndex >= 0 ? new Set((process.argv[onlyIndex + 1] ?? "").split(",")) : undefined;
const unknown = [...(only ?? [])].filter((name) => !sectionNames.includes(name));
if (unknown.length > 0) {
  process.stderr.write(
    `pnpm bench: no section ${unknown.join(", ")}; the sections are ${sectionNames.join(",")}\n`,
  );
  process.exit(2);
}

const { docker } = await connectDocker();
const machine = await describeMachine(docker);
const startedAt = new Date();
const began = performance.now();
const progress = (message: string) =>
  process.stderr.write(
    `[${Math.round((performance.now() - began) / 1000)}s, load ${loadavg()[0]!.toFixed(1)}] ${message}\n`,
  );
// The sections that time the `codeaction` command run it as users get it: installed from the tarballs.
let installed: InstalledCli | undefined;
const installedBin = async () => {
  installed ??= await installCli(progress);
  return installed.bin;
};
const report = createReport();
const context: SectionContext = {
  ...report,
  docker,
  plan: quick ? plans.quick : plans.full,
  poolSize: 2,
  progress,
  installedBin,
};
for (const section of sections) {
  if (only === undefined || section.names.some((name) => only.has(name))) await section.run(context);
}

await installed?.remove();
const { rows, raw } = report;
const durationSeconds = Math.round((performance.now() - began) / 1000);
const loadAtEnd = loadavg().map((value) => Math.round(value * 100) / 100);
const table = renderTable(rows);
process.stdout.write(`${table}\n\n`);
process.stdout.write(
  `${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Docker ${machine.dockerVersion} (${machine.storageDriver}, cgroup v${machine.cgroupVersion}), Node ${machine.node}; load average ${machine.loadAverage.join(" ")} at start, ${loadAtEnd.join(" ")} at end; ${durationSeconds} s${quick ? " (--quick)" : ""}\n`,
);

const resultsFolder = join(dirname(fileURLToPath(import.meta.url)), "results");
await mkdir(resultsFolder, { recursive: true });
const file = join(resultsFolder, quick || only ? "quick.json" : "latest.json");
const roundedRows = rows.map((row) => ({
  ...row,
  ...(row.p50 === undefined ? {} : { p50: round(row.p50) }),
  ...(row.p95 === undefined ? {} : { p95: round(row.p95) }),
}));
await writeFile(
  file,
  `${JSON.stringify({ startedAt: startedAt.toISOString(), durationSeconds, quick, sections: only ? [...only] : "all", machine: { ...machine, loadAverageAtEnd: loadAtEnd }, rows: roundedRows, raw }, null, 2)}\n`,
);
process.stdout.write(`Wrote ${file}\n`);
// Under gVisor an exec's connection can outlive its removed container (see docs/performance.md): do
// not let one keep the benchmark running.
process.exit(0);
