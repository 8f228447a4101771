import { resolve } from "node:path";
import { appendChained } from "@codeaction/core/durable";
import { CliError } from "../errors/cli-error.ts";
import {
  ensureJournalFolder,
  journalError,
  openJournalFile,
  rotateJournal,
  withJournalLock,
} from "./journal-file.ts";

/** The environment variable holding the journal's HMAC key. */
export const journalKeyVariable = "CODEACTION_JOURNAL_KEY";

/** Where `ask` appends its run records unless told otherwise: in the working folder. */
export const defaultJournalPath = ".codeaction/runs.jsonl";

/** The journal's settings, from the environment. */
export type JournalSettings = {
  /** The HMAC key (CODEACTION_JOURNAL_KEY); without it records are chained by a SHA-256 hash. */
  key: string | undefined;
  /** A file about to grow past this many bytes is rotated first (CODEACTION_JOURNAL_MAX_BYTES). */
  maxBytes: number;
  /** How many rotated files are kept (CODEACTION_JOURNAL_KEEP). */
  keep: number;
};

export const defaultJournalMaxBytes = 16 * 1024 * 1024;
export const defaultJournalKeep = 4;

export function journalSettings(env: NodeJS.ProcessEnv): JournalSettings {
  const key = env[journalKeyVariable];
  return {
    key: key === undefined || key === "" ? undefined : key,
    maxBytes: positiveInteger(env, "CODEACTION_JOURNAL_MAX_BYTES", defaultJournalMaxBytes),
    keep: positiveInteger(env, "CODEACTION_JOURNAL_KEEP", defaultJournalKeep),
  };
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text.trim() === "") return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new CliError(
      `${name} must be a whole number above 0 (it is ${JSON.stringify(text)}); unset it for the default ${fallback}.`,
      {
        code: "journal",
      },
    );
  }
  return value;
}

/**
 * Appends one run record as one line, chained to the record before it (core's chained log), under
 * the journal's lock. The folder is created 0700 and the file 0600, no link is followed, and a file
 * the line would take past `maxBytes` is rotated first: the new file's first record links to the
 * rotated file's last. Throws a CliError naming the path and the fix when it cannot write.
 */
export async function appendToJournal(path: string, record: object, env: NodeJS.ProcessEnv): Promise<string> {
  const settings = journalSettings(env);
  const absolute = resolve(path);
  try {
    await ensureJournalFolder(absolute);
    await withJournalLock(absolute, () => appendHoldingLock(absolute, record, settings));
  } catch (error) {
    if (CliError.isInstance(error)) throw error;
    throw journalError(path, (error as Error).message, error);
  }
  return absolute;
}

/**
 * Appends one record as appendToJournal does, for a caller that already holds the journal's lock
 * (withJournalLock) because what it appends depends on what it read (the resume's take).
 */
export async function appendHoldingLock(
  path: string,
  record: object,
  { key, maxBytes, keep }: JournalSettings,
): Promise<void> {
  await appendChained(path, record, {
    key,
    maxBytes,
    open: openJournalFile,
    rotate: (full) => rotateJournal(full, keep),
  });
}
