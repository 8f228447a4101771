import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, open, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { ConfigError } from "../errors/config-error.ts";
import { ResumeStateError } from "../errors/resume-state-error.ts";
import { privateFolder, writePrivateFile } from "../private-file.ts";
import { sha256Hex } from "./canonical-json.ts";
import { withFileLock } from "./file-lock.ts";
import type { RunState } from "./run-state.ts";
import type { RunStore } from "./run-store.ts";
import { appendStoreLog, defaultStoreLogBytes } from "./run-store-log.ts";
import { consumeState, createFileUsedStates } from "./used-states.ts";

/** Options of `createFileRunStore`. */
export type FileRunStoreOptions = {
  /**
   * The HMAC key (at least 16 bytes) that chains the store's log; without it the log is chained by
   * SHA-256 hashes (they show edits, not who made them: docs/durable-runs.md). Give
   * `verifyFileRunStore` the same key.
   */
  key?: string;
  /** The log is rotated (one older file kept) before it grows past this many bytes (default 4 MiB). */
  maxLogBytes?: number;
};

/** A run id as a file name: what the agent makes (`run_` and hex), and nothing that could leave the folder. */
const runIdPattern = /^[A-Za-z0-9_-]{1,64}$/;
/** A state file larger than this is refused before it is read (the call log's own budget is 8 MiB). */
const maxStateBytes = 64 * 1024 * 1024;

/**
 * The embedded run store: one JSON file per waiting run (`<runId>.json`) in a folder of its own,
 * 0700, its files 0600, written whole to a temporary name and renamed (a crash leaves the old state
 * or the new, never half of one), read without following a link, taken by renaming it away first
 * (the rename is atomic, so only one taker gets it), and its nonce recorded in `used/` (a state
 * file put back after it was taken is refused: ResumeStateError "consumed"). Files, not node:sqlite: SQLite is still
 * experimental in Node 22 (a warning on every load), a state is one document read by its key, and a
 * file per run is easy to inspect, back up and delete.
 */
export function createFileRunStore(directory: string, options: FileRunStoreOptions = {}): RunStore {
  checkStoreKey(options.key);
  const ready = prepareFolder(directory);
  const pathOf = (runId: string) => join(directory, `${checkRunId(runId)}.json`);
  const log = { key: options.key, maxBytes: options.maxLogBytes ?? defaultStoreLogBytes };
  // Every change and its log record are one step under the store's lock: the log's order is the files'.
  const locked = <T>(work: () => Promise<T>) => withFileLock(join(directory, ".store.lock"), work);
  const at = () => new Date().toISOString();
  // A taken state's nonce is recorded: a state file put back (a backup, a copy) is never taken twice.
  const used = createFileUsedStates(join(directory, "used"));
  return {
    async save(state) {
      await ready;
      const target = pathOf(state.runId);
      const text = JSON.stringify(state);
      const temporary = join(directory, `.${state.runId}.${randomBytes(6).toString("hex")}.tmp`);
      await writePrivateFile(temporary, text, { hint: folderHint, exclusive: true, sync: true });
      await locked(async () => {
        await rename(temporary, target);
        const record = { op: "save" as const, runId: state.runId, sha256: sha256Hex(text), at: at() };
        await appendStoreLog(directory, { ...record, bytes: Buffer.byteLength(text) }, log);
      });
    },
    async load(runId) {
      await ready;
      return readState(pathOf(runId));
    },
    async take(runId) {
      await ready;
      const taken = join(directory, `.${checkRunId(runId)}.${randomBytes(6).toString("hex")}.taken`);
      const found = await locked(async () => {
        try {
          await rename(pathOf(runId), taken);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
          throw error;
        }
        await appendStoreLog(directory, { op: "take", runId, at: at() }, log);
        return true;
      });
      if (!found) return undefined;
      let state: RunState | undefined;
      try {
        state = await readState(taken);
      } finally {
        await unlink(taken).catch(() => undefined);
      }
      if (state) await consumeState(state, used);
      return state;
    },
    async list() {
      await ready;
      return listRunIds(directory);
    },
  };
}

const folderHint = "give the run store a folder of its own";

function prepareFolder(directory: string): Promise<void> {
  return privateFolder(directory, folderHint);
}

function checkRunId(runId: string): string {
  if (!runIdPattern.test(runId)) {
    throw new ConfigError({
      message: `run id ${JSON.stringify(runId).slice(0, 80)} is not one the agent makes (letters, digits, _ and -, at most 64)`,
    });
  }
  return runId;
}

/** A state file's JSON, or undefined when absent; never through a link, never past maxStateBytes. */
async function readState(path: string): Promise<RunState | undefined> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    const { size } = await file.stat();
    if (size > maxStateBytes) {
      throw new ResumeStateError({
        reason: "malformed",
        message: `the run state ${path} is ${size} bytes, over ${maxStateBytes}; it is not one the agent wrote`,
      });
    }
    return JSON.parse(await file.readFile("utf8")) as RunState;
  } finally {
    await file.close();
  }
}

/** Refuses a key too short to be a secret. */
function checkStoreKey(key: string | undefined): void {
  if (key !== undefined && Buffer.byteLength(key) < 16) {
    throw new ConfigError({
      message: `the run store's key must be at least 16 bytes (it is ${Buffer.byteLength(key)}); use a random key of 32 bytes, e.g. \`openssl rand -hex 32\``,
    });
  }
}

/** The kept runs' ids, oldest first (by the state file's time, then by id). */
async function listRunIds(directory: string): Promise<string[]> {
  const names = (await readdir(directory)).filter((name) => name.endsWith(".json") && !name.startsWith("."));
  const dated = await Promise.all(
    names.map(async (name) => ({
      runId: name.slice(0, -5),
      time: (await lstat(join(directory, name))).mtimeMs,
    })),
  );
  return dated
    .sort((left, right) => left.time - right.time || left.runId.localeCompare(right.runId))
    .map((entry) => entry.runId);
}
