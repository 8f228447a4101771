import { constants } from "node:fs";
import { open } from "node:fs/promises";

/** How much of the journal's end the desk reads for its past runs. */
export const journalTailBytes = 4 * 1024 * 1024;
/** The most past runs the page lists. */
export const maxPastRuns = 50;
/** The characters of a past run's question and answer the page gets. */
const previewCharacters = 300;

/** A past run of the desk, as the page lists it. */
export type PastRun = {
  /** Missing when the run failed before it started. */
  runId?: string;
  startedAt: string;
  question: string;
  status: string;
  answer?: string;
  error?: string;
  totalMs?: number;
};

/**
 * The desk's past runs (records with `command: "desk"`), newest first, from the last
 * `journalTailBytes` of the journal: opened without following a link, the first (cut) line of the
 * tail skipped, a line that is not a record skipped. No journal yet: none.
 */
export async function readPastRuns(journalPath: string): Promise<PastRun[]> {
  const handle = await open(
    journalPath,
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (!handle) return [];
  let text: string;
  let cut: boolean;
  try {
    const status = await handle.stat();
    if (!status.isFile()) return [];
    const length = Math.min(status.size, journalTailBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, status.size - length);
    text = buffer.toString("utf8");
    cut = length < status.size;
  } finally {
    await handle.close();
  }
  const lines = text.split("\n");
  if (cut) lines.shift();
  const runs: PastRun[] = [];
  for (const line of lines.reverse()) {
    const run = pastRun(line);
    if (run) runs.push(run);
    if (runs.length === maxPastRuns) break;
  }
  return runs;
}

function pastRun(line: string): PastRun | undefined {
  if (!line.includes('"command":"desk"')) return undefined;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (record.command !== "desk" || typeof record.question !== "string") return undefined;
  const error = record.error as { message?: unknown } | undefined;
  const timings = record.timings as { totalMs?: unknown } | undefined;
  return {
    ...(typeof record.runId === "string" ? { runId: record.runId } : {}),
    startedAt: String(record.startedAt ?? ""),
    question: record.question.slice(0, previewCharacters),
    status: String(record.status ?? ""),
    ...(typeof record.answer === "string" ? { answer: record.answer.slice(0, previewCharacters) } : {}),
    ...(typeof error?.message === "string" ? { error: error.message.slice(0, previewCharacters) } : {}),
    ...(typeof timings?.totalMs === "number" ? { totalMs: timings.totalMs } : {}),
  };
}
