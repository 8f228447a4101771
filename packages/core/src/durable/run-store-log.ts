import { readdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "./canonical-json.ts";
import { appendChained } from "./chained-log.ts";
import type { ChainEnd } from "./record-chain.ts";
import { type ChainBreak, type LineOfFile, verifyChain } from "./verify-chain.ts";

// The file run store's log: every save and take, one chained line each (record-chain.ts, as the
// CLI's journal), so that a state changed, removed or planted outside the store, and a record of the
// log changed, removed or reordered, shows in verifyFileRunStore().

/** The log's file in the store's folder, and the one it rotates to. */
export const storeLogName = "store-log.jsonl";
const rotatedLogName = "store-log.1.jsonl";
/** A log about to grow past this is rotated (one older file is kept): about 16,000 saves and takes. */
export const defaultStoreLogBytes = 4 * 1024 * 1024;

/** One line of the log: a state saved (with its file's digest), or taken. */
export type StoreLogRecord =
  | { op: "save"; runId: string; sha256: string; bytes: number; at: string }
  | { op: "take"; runId: string; at: string };

/** Appends `record`, chained to the log's last line; the caller holds the store's lock. */
export async function appendStoreLog(
  directory: string,
  record: StoreLogRecord,
  options: { key: string | undefined; maxBytes: number },
): Promise<void> {
  const rotate = (path: string) => rename(path, join(directory, rotatedLogName));
  try {
    await appendChained(join(directory, storeLogName), record, { ...options, rotate });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOTREGULAR") throw error;
    throw new Error(`the run store's log ${join(directory, storeLogName)} is not a regular file`);
  }
}

/** What `verifyFileRunStore` found: the log's chain, and whether each waiting state is the one the log saved. */
export type RunStoreVerification = {
  /** True when the chain holds and every state file matches the log. */
  ok: boolean;
  /** Records of the log that verified. */
  records: number;
  /** The first record where the log's chain breaks: changed, removed, inserted or reordered. */
  broken?: ChainBreak;
  /** State files that are not as the log says: changed, removed, or never saved through the store. */
  states: { runId: string; problem: string }[];
  /** The log's last record (note it elsewhere: records cut from the end show only against it). */
  last?: ChainEnd;
};

/**
 * Checks a file run store: its log's chain (an HMAC with `key`, else SHA-256 hashes; with a key,
 * every record must carry an HMAC), then every state file against the log's last save of its run.
 */
export async function verifyFileRunStore(
  directory: string,
  options: { key?: string } = {},
): Promise<RunStoreVerification> {
  const names = await readdir(directory);
  const files = [rotatedLogName, storeLogName].filter((name) => names.includes(name));
  const lines: LineOfFile[] = [];
  for (const name of files) {
    const text = await readFile(join(directory, name), "utf8");
    const split = text.split("\n");
    if (split.at(-1) === "") split.pop();
    for (const [index, line] of split.entries()) lines.push({ file: name, line: index + 1, text: line });
  }
  const chain = verifyChain(lines, { key: options.key, rotatedStart: files[0] === rotatedLogName });
  const base = { records: chain.records, ...(chain.last ? { last: chain.last } : {}) };
  if (chain.broken) return { ok: false, ...base, broken: chain.broken, states: [] };
  if (chain.unchained > 0) {
    // The store never wrote a line without its link: one before the chain was put there.
    const first = lines[0]!;
    const message = `${first.file} line ${first.line} is not a chained record: it was inserted`;
    const broken: ChainBreak = { kind: "inserted", file: first.file, line: first.line, message };
    return { ok: false, ...base, broken, states: [] };
  }
  const states = await checkStates(directory, names, lines, chain.startsAt !== undefined);
  return { ok: states.length === 0, ...base, states };
}

/** Each waiting state file against the log's last record of its run, and each saved run's file present. */
async function checkStates(
  directory: string,
  names: string[],
  lines: LineOfFile[],
  rotatedOut: boolean,
): Promise<RunStoreVerification["states"]> {
  const last = new Map<string, StoreLogRecord>();
  for (const line of lines) {
    const record = JSON.parse(line.text) as StoreLogRecord;
    last.set(record.runId, record);
  }
  const problems: RunStoreVerification["states"] = [];
  const waiting = names.filter((name) => name.endsWith(".json") && !name.startsWith("."));
  for (const name of waiting) {
    const runId = name.slice(0, -".json".length);
    const record = last.get(runId);
    if (record?.op !== "save") {
      // A save rotated out of the log is not covered; a state taken, or never saved, was planted.
      if (record === undefined && rotatedOut) continue;
      const problem =
        record === undefined
          ? "its state file was not saved through the store (the log has no record of it)"
          : "its state file is back after it was taken";
      problems.push({ runId, problem });
      continue;
    }
    const text = await readFile(join(directory, name), "utf8");
    if (sha256Hex(text) !== record.sha256) {
      problems.push({
        runId,
        problem: "its state file was changed after it was saved (its digest differs from the log's)",
      });
    }
  }
  for (const [runId, record] of last) {
    if (record.op === "save" && !waiting.includes(`${runId}.json`)) {
      problems.push({ runId, problem: "its state file was removed without being taken" });
    }
  }
  return problems;
}
