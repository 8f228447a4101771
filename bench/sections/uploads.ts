import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  dictionaryParquet,
  longStringWorkbook,
  smallParquet,
  smallWorkbook,
  zipBombWorkbook,
} from "../../packages/cli/test/hostile-data-files.ts";
import { readInChild } from "../../packages/cli/test/read-data-file.ts";
import type { SectionContext } from "./section.ts";

/**
 * `pnpm bench --only uploads`: the issue 45 #3 files (a zip-bomb .xlsx, a workbook of long
 * strings, a dictionary-encoded parquet file) read as `ask --file` and a desk upload read them,
 * each in a child process of its own: its peak resident memory's growth (VmHWM, /proc) and the
 * time until the refusal. The target: growth under 256 MiB.
 */
export async function uploadsSection(context: SectionContext): Promise<void> {
  const { plan, progress, figure, ratio } = context;
  const section = "hostile data files (ask --file, desk uploads)";
  const folder = await mkdtemp(join(tmpdir(), "codeaction-bench-uploads-"));
  const conversions = await mkdtemp(join(tmpdir(), "codeaction-bench-conversions-"));
  try {
    const xlsx = await smallWorkbook(folder);
    const parquet = await smallParquet(folder);
    const files = [
      { name: "zip-bomb .xlsx (1 GiB unpacked)", file: await zipBombWorkbook(folder), warmUp: xlsx },
      { name: "long strings .xlsx (3 x 56 MiB)", file: await longStringWorkbook(folder), warmUp: xlsx },
      { name: "dictionary parquet (1.6 GiB as CSV)", file: await dictionaryParquet(folder), warmUp: parquet },
    ];
    for (const { name, file, warmUp } of files) {
      const growth: number[] = [];
      const times: number[] = [];
      for (let round = 0; round < plan.uploadRounds; round += 1) {
        progress(`uploads: ${name}, round ${round + 1}`);
        const outcome = await readInChild({ warmUp, file, tmpdir: conversions });
        if (outcome.error === undefined) throw new Error(`${name} was read, not refused`);
        growth.push((outcome.after - outcome.before) / 1024);
        times.push(outcome.milliseconds);
      }
      const summary = figure(section, `${name}: peak RSS growth`, growth, "MiB");
      figure(section, `${name}: time to refuse`, times, "ms");
      ratio(section, `${name}: growth / 256 MiB`, summary.p95 / 256, {
        text: "< 1",
        met: summary.p95 < 256,
      });
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
    await rm(conversions, { recursive: true, force: true });
  }
}
