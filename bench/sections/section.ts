import type { connectDocker } from "@codeaction/sandbox";
import { type Summary, summarize } from "../stats.ts";
import type { Row } from "../table.ts";

/** How many rounds and calls each section measures: `quick` for a smoke run (`--quick`), else `full`. */
export const plans = {
  quick: {
    turnRounds: 3,
    gvisorRounds: 2,
    callRounds: 1,
    calls: 100,
    referenceCalls: 5,
    remoteRounds: 2,
    sequential: 2,
    concurrent: 4,
    queued: 8,
    samplesRounds: 2,
    failFastRounds: 2,
    cliRounds: 2,
    idleRounds: 1,
    deskRounds: 1,
    deskPageRounds: 2,
    uploadRounds: 1,
  },
  full: {
    turnRounds: 20,
    gvisorRounds: 10,
    callRounds: 3,
    calls: 500,
    referenceCalls: 30,
    remoteRounds: 8,
    sequential: 8,
    concurrent: 8,
    queued: 32,
    samplesRounds: 10,
    failFastRounds: 5,
    cliRounds: 8,
    idleRounds: 3,
    deskRounds: 3,
    deskPageRounds: 8,
    uploadRounds: 3,
  },
};

export type Plan = (typeof plans)["full"];

/** The rows of the table and the raw figures of the JSON file, filled in by the sections. */
export type Report = {
  rows: Row[];
  raw: Record<string, Summary | unknown>;
  /** Adds a row of p50 and p95 of `values` (and their summary to `raw`); returns the summary. */
  figure: (section: string, name: string, values: number[], unit?: string, note?: string) => Summary;
  /** Adds a row of one ratio, with its target when it has one. */
  ratio: (
    section: string,
    name: string,
    value: number,
    target?: { text: string; met: boolean },
    note?: string,
  ) => void;
};

/** What every section gets: the engine, the plan, progress lines, the installed CLI, and the report. */
export type SectionContext = Report & {
  docker: Awaited<ReturnType<typeof connectDocker>>["docker"];
  plan: Plan;
  poolSize: number;
  progress: (message: string) => void;
  /** The `codeaction` command installed from the packed tarballs (installed once, on first use). */
  installedBin: () => Promise<string>;
};

export function createReport(): Report {
  const rows: Row[] = [];
  const raw: Record<string, Summary | unknown> = {};
  const figure = (section: string, name: string, values: number[], unit = "ms", note?: string): Summary => {
    const summary = summarize(values);
    raw[`${section}: ${name}`] = summary;
    rows.push({
      section,
      figure: name,
      p50: summary.p50,
      p95: summary.p95,
      unit,
      count: summary.count,
      ...(note ? { note } : {}),
    });
    return summary;
  };
  const ratio = (
    section: string,
    name: string,
    value: number,
    target?: { text: string; met: boolean },
    note?: string,
  ) => {
    rows.push({
      section,
      figure: name,
      p50: value,
      unit: "x",
      ...(target ? { target: target.text, met: target.met } : {}),
      ...(note ? { note } : {}),
    });
  };
  return { rows, raw, figure, ratio };
}
