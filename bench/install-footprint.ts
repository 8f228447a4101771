// What a user pays to install and import us, side by side with what our dependencies alone cost.
// Packs the packages, installs the tarballs with npm into a new project under /tmp (as the packaging
// test does), then measures:
// - install size: the consumer's whole node_modules, our three packages' share of it, and each of
//   their direct dependencies' share (what only it brings in: dependency-shares.ts);
// - cold import: a fresh `node` importing @codeaction/core, against a floor that imports exactly the
//   third-party modules our compiled code imports (@langchain/core, @langchain/openai, dockerode, the
//   MCP SDK, pino, zod) and against an empty `node`. Our share of the import cost is
//   (core - floor) / (core - empty node); the goal is under 20%.
// - the smaller install docs/api.md describes (dockerode's BuildKit dependencies overridden by an
//   empty package, `npm install --omit=optional`): its node_modules and packages beside the plain one.
// Usage: node bench/install-footprint.ts [runs=15]   (writes bench/results/install-footprint.json)
import { spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createConsumer } from "../tests/packaging/consumer-project.ts";
import { type PackedPackage, packPackages, repositoryRoot } from "../tests/packaging/pack-packages.ts";
import { dependencyShares } from "./dependency-shares.ts";
import { round, summarize } from "./stats.ts";
import { type Row, renderTable } from "./table.ts";

const runs = Number(process.argv[2] ?? 15);

function folderBytes(path: string): number {
  const result = spawnSync("du", ["-sb", path], { encoding: "utf8" });
  return Number(result.stdout.split("\t")[0]);
}

/** The bare specifiers the compiled JavaScript of our packages imports at run time (static imports). */
async function thirdPartyImports(project: string): Promise<string[]> {
  const found = new Set<string>();
  for (const name of ["core", "sandbox"]) {
    const dist = join(project, "node_modules/@codeaction", name, "dist");
    for (const file of await readdir(dist, { recursive: true })) {
      if (!file.endsWith(".js")) continue;
      const source = await readFile(join(dist, file), "utf8");
      for (const match of source.matchAll(/^import (?:[^"']*? from )?["']([^"'.][^"']*)["'];$/gm)) {
        const specifier = match[1]!;
        if (!specifier.startsWith("node:") && !specifier.startsWith("@codeaction/")) found.add(specifier);
      }
    }
  }
  return [...found].sort();
}

function importMilliseconds(project: string, script: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { cwd: project });
  if (result.status !== 0) throw new Error(`import failed: ${result.stderr}`);
  return performance.now() - started;
}

async function measure(project: string): Promise<Row[]> {
  const floor = await thirdPartyImports(project);
  const scripts = {
    empty: "",
    floor: `await Promise.all(${JSON.stringify(floor)}.map((specifier) => import(specifier)));`,
    core: 'await import("@codeaction/core");',
  };
  const times: Record<keyof typeof scripts, number[]> = { empty: [], floor: [], core: [] };
  importMilliseconds(project, scripts.core); // the first run warms the page cache, for all three alike
  for (let run = 0; run < runs; run++) {
    for (const key of ["empty", "floor", "core"] as const)
      times[key].push(importMilliseconds(project, scripts[key]));
  }
  const [empty, floorTime, core] = [summarize(times.empty), summarize(times.floor), summarize(times.core)];
  const share = (core.p50 - floorTime.p50) / (core.p50 - empty.p50);
  const total = folderBytes(join(project, "node_modules"));
  const ours = ["sandbox", "core", "cli"].map((name) =>
    folderBytes(join(project, "node_modules/@codeaction", name)),
  );
  const mebibytes = (bytes: number) => round(bytes / 1024 / 1024);
  const oursTotal = ours.reduce((sum, bytes) => sum + bytes, 0);
  const shares: Row[] = dependencyShares(project).map((share) => ({
    section: "install, by dependency",
    figure: share.dependency,
    p50: mebibytes(share.bytes),
    unit: "MiB",
    note: `${share.packages} packages, ${round((share.bytes / total) * 100)}% of node_modules`,
  }));
  return [
    ...shares,
    { section: "install", figure: "consumer node_modules (npm)", p50: mebibytes(total), unit: "MiB" },
    { section: "install", figure: "our three packages in it", p50: mebibytes(oursTotal), unit: "MiB" },
    {
      section: "install",
      figure: "our share of the install",
      p50: round((oursTotal / total) * 100),
      unit: "%",
    },
    {
      section: "import",
      figure: "node, empty",
      p50: round(empty.p50),
      p95: round(empty.p95),
      unit: "ms",
      count: runs,
    },
    {
      section: "import",
      figure: "floor: our dependencies alone",
      p50: round(floorTime.p50),
      p95: round(floorTime.p95),
      unit: "ms",
      count: runs,
      note: floor.join(" "),
    },
    {
      section: "import",
      figure: "@codeaction/core",
      p50: round(core.p50),
      p95: round(core.p95),
      unit: "ms",
      count: runs,
    },
    {
      section: "import",
      figure: "our share: (core - floor) / (core - empty)",
      p50: round(share * 100),
      unit: "%",
      target: "< 20%",
      met: share < 0.2,
    },
  ];
}

/** Installed package folders (node_modules/<name> and node_modules/@scope/<name>, at any depth). */
async function installedPackages(modules: string): Promise<string[]> {
  const entries = await readdir(modules, { recursive: true });
  return entries
    .filter((entry) => entry.endsWith("/package.json"))
    .map((entry) => entry.slice(0, -"/package.json".length))
    .filter((folder) => /(^|\/node_modules\/)(@[^/]+\/)?[^/@.][^/]*$/.test(folder));
}

/** docs/api.md's smaller install (BuildKit dependencies overridden, --omit=optional) beside the plain one. */
async function measureSmaller(workArea: string, packed: PackedPackage[], plain: string): Promise<Row[]> {
  const project = join(workArea, "consumer-smaller");
  await createConsumer(project, "npm", packed, { slim: true });
  const mebibytes = (bytes: number) => round(bytes / 1024 / 1024);
  const [plainBytes, smallerBytes] = [plain, project].map((folder) =>
    folderBytes(join(folder, "node_modules")),
  );
  const [plainPackages, smallerPackages] = await Promise.all(
    [plain, project].map(async (folder) => (await installedPackages(join(folder, "node_modules"))).length),
  );
  const section = "install, smaller (docs/api.md)";
  return [
    { section, figure: "consumer node_modules (npm)", p50: mebibytes(smallerBytes!), unit: "MiB" },
    {
      section,
      figure: "saved against the plain install",
      p50: mebibytes(plainBytes! - smallerBytes!),
      unit: "MiB",
    },
    { section, figure: "installed packages, plain", p50: plainPackages!, unit: "packages" },
    { section, figure: "installed packages, smaller", p50: smallerPackages!, unit: "packages" },
  ];
}

const workArea = await mkdtemp("/tmp/codeaction-footprint-");
try {
  const packed = await packPackages(join(workArea, "tarballs"));
  const project = join(workArea, "consumer");
  await createConsumer(project, "npm", packed);
  const tarballs = packed.map((entry) => ({ package: entry.name, bytes: entry.bytes }));
  const rows = [...(await measure(project)), ...(await measureSmaller(workArea, packed, project))];
  process.stdout.write(`${renderTable(rows)}\n\ntarballs: ${JSON.stringify(tarballs)}\n`);
  const record = { date: new Date().toISOString(), runs, tarballs, rows };
  await writeFile(
    join(repositoryRoot, "bench/results/install-footprint.json"),
    `${JSON.stringify(record, null, 2)}\n`,
  );
} finally {
  await rm(workArea, { recursive: true, force: true });
}
