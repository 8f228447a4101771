import { execFile, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fenced } from "./agents.ts";
import { type DeskPhase, phasesOf, scanMsOf } from "./desk-breakdown.ts";

const run = promisify(execFile);
const dataImage = "codeaction/python:3.11-data";
/** Debian's interpreter, where python3-pandas installs (a python3 earlier on PATH, such as pyenv's, would lack it). */
const hostInterpreter = "/usr/bin/python3";

/** One answer: wall time, the program's own peak RSS (pandas' process), and the host process's peak RSS. */
export type DeskSample = {
  wallMs: number;
  programPeakKiB: number;
  hostPeakKiB: number;
  /** `ask` only: the first question's time phase by phase (desk-breakdown.ts). */
  phasesMs?: Record<DeskPhase, number>;
  /** `ask` only: the data file scan's own time, overlapping the phases (desk-breakdown.ts). */
  scanMs?: number;
};
export type DeskSamples = {
  rows: number;
  fileBytes: number;
  /** The file mounted read-only (a local engine: issue 46). */
  ask: DeskSample[];
  /** The same file named through a link: never mounted, so copied (the way before issue 46). */
  askCopied: DeskSample[];
  dockerRun: DeskSample[];
  host: DeskSample[];
};

/** The analyst's program: Q3 revenue per region with pandas, and its own peak memory. */
export function pandasProgram(path: string): string {
  return [
    "import json, resource",
    "import pandas as pd",
    `frame = pd.read_csv(${JSON.stringify(path)})`,
    'q3 = frame[(frame["date"] >= "2026-07-01") & (frame["date"] <= "2026-09-30")]',
    'revenue = (q3["quantity"] * q3["unit_price"]).groupby(q3["region"]).sum().round(2)',
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss",
    'print("RESULT: " + json.dumps({"revenue": revenue.to_dict(), "rows": len(frame), "peakKiB": peak}))',
  ].join("\n");
}

/** A CSV of `rows` orders (about 60 bytes a row), written as a stream. */
export async function writeOrders(path: string, rows: number): Promise<void> {
  const regions = ["North America", "EMEA", "APAC", "LATAM"];
  const products = ["Starter", "Team", "Business", "Enterprise"];
  const prices = [29, 99, 249, 899];
  const out = createWriteStream(path);
  out.write("order_id,date,region,product,quantity,unit_price\n");
  for (let index = 0; index < rows; index += 1) {
    const month = 1 + (index % 12);
    const day = 1 + ((index * 7) % 28);
    const product = (index * 13) % 4;
    const line = `O-${String(index).padStart(7, "0")},2026-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")},${regions[(index * 5) % 4]},${products[product]},${1 + (index % 17)},${prices[product]}.0\n`;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

type Timed = {
  stdout: string;
  stderr: string;
  wallMs: number;
  peakKiB: number;
  spawnedAt: number;
  exitedAt: number;
};

/** Runs a command under GNU time; resolves with its output, wall time (and clock times) and peak RSS (KiB). */
function timed(command: string[], cwd: string): Promise<Timed> {
  const timeFile = join(cwd, `time-${process.hrtime.bigint()}.txt`);
  const started = performance.now();
  const spawnedAt = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/time", ["-f", "%M", "-o", timeFile, ...command], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", async (exitCode) => {
      const wallMs = performance.now() - started;
      const exitedAt = Date.now();
      if (exitCode !== 0)
        return reject(new Error(`${command.join(" ")} exited ${exitCode}: ${stderr.slice(-600)}`));
      const peakKiB = Number((await readFile(timeFile, "utf8")).trim().split("\n").at(-1));
      resolve({ stdout, stderr, wallMs, peakKiB, spawnedAt, exitedAt });
    });
  });
}

/** The program's answer: its RESULT line, or (from `ask --format json`) the whole of stdout. */
function answerOf(stdout: string): { revenue: Record<string, number>; rows: number; peakKiB: number } {
  const line = stdout.split("\n").findLast((text) => text.startsWith("RESULT: "));
  return JSON.parse(line ? line.slice("RESULT: ".length) : stdout);
}

/**
 * Pandas on the host, from Debian's python3-pandas: installed by this set-up when missing (the
 * bench's own; CI's setup does not need it). Throws when Debian does not offer it.
 */
async function hostPython(onProgress?: (message: string) => void): Promise<void> {
  const has = await run(hostInterpreter, ["-c", "import pandas"]).then(
    () => true,
    () => false,
  );
  if (has) return;
  onProgress?.("desk: installing python3-pandas on the host (Debian's package) for the floor");
  await run("apt-get", ["install", "-y", "--no-install-recommends", "python3-pandas"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * The analyst's desk on a 1,000,000-row CSV, side by side and interleaved: (j) `codeaction ask
 * --data --csv` with a replayed pandas program reading /workspace/data, end to end through the CLI
 * process; (k) the same program in a plain `docker run` of the data image with the file mounted;
 * (l) the same program run by python3 on the host (the floor). Every answer must match.
 */
export async function measureDesk(options: {
  /** The installed CLI's bin.js (installed-cli.ts). */
  bin: string;
  rounds: number;
  rows: number;
  onProgress?: (message: string) => void;
}): Promise<DeskSamples> {
  await hostPython(options.onProgress);
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-desk-"));
  const data = join(folder, "orders.csv");
  try {
    await writeOrders(data, options.rows);
    const replay = join(folder, "pandas.json");
    await writeFile(
      replay,
      JSON.stringify({ replies: [fenced(pandasProgram("/workspace/data/orders.csv"))] }),
    );
    const samples: DeskSamples = {
      rows: options.rows,
      fileBytes: (await stat(data)).size,
      ask: [],
      askCopied: [],
      dockerRun: [],
      host: [],
    };
    // The same file behind a link: the mount check refuses a link, so it is copied, as before issue 46.
    const linked = join(folder, "linked", "orders.csv");
    await mkdir(join(folder, "linked"));
    await symlink(data, linked);
    const askWith = (csv: string) =>
      [process.execPath, options.bin, "ask", "--data", "--csv", csv, "--replay", replay].concat([
        "--format",
        "json",
        "--no-journal",
        "--quiet",
        // Its debug lines time the phases (desk-breakdown.ts); a score of lines, written at once.
        "--debug",
        "Q3 revenue per region?",
      ]);
    const variants = {
      ask: askWith(data),
      askCopied: askWith(linked),
      dockerRun: [
        "docker",
        "run",
        "--rm",
        "--network",
        "none",
        "-v",
        `${data}:/workspace/data/orders.csv:ro`,
      ].concat([dataImage, "python3", "-c", pandasProgram("/workspace/data/orders.csv")]),
      host: [hostInterpreter, "-c", pandasProgram(data)],
    } as const;
    let expected: string | undefined;
    for (let round = 0; round <= options.rounds; round += 1) {
      for (const [name, command] of Object.entries(variants) as [keyof typeof variants, string[]][]) {
        const result = await timed(command, folder);
        const answer = answerOf(result.stdout);
        const revenue = JSON.stringify(answer.revenue);
        expected ??= revenue;
        if (revenue !== expected || answer.rows !== options.rows) {
          throw new Error(`desk: ${name} answered ${revenue} over ${answer.rows} rows, not ${expected}`);
        }
        // The first round loads caches (the page cache, the image) and is not counted.
        if (round > 0) {
          samples[name].push({
            wallMs: result.wallMs,
            programPeakKiB: answer.peakKiB,
            hostPeakKiB: result.peakKiB,
            ...(name.startsWith("ask")
              ? {
                  phasesMs: phasesOf(result.stderr, result.spawnedAt, result.exitedAt),
                  scanMs: scanMsOf(result.stderr) ?? 0,
                }
              : {}),
          });
        }
      }
      options.onProgress?.(`desk round ${round}/${options.rounds}`);
    }
    return samples;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
