import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { type LineOfFile, type Verification, verifyChain } from "@codeaction/core/internal";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath, journalKeyVariable, journalSettings } from "../journal/append.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";

export const auditVerifyHelp = `Usage: codeaction audit verify [FILE]

Checks that the run journal (default ${defaultJournalPath}, with its rotated files
runs.1.jsonl, runs.2.jsonl, ... oldest first) is as it was written: every record's tag matches
its content, and every record links to the one before it. Names the first record that was
changed, removed, inserted or reordered.

With CODEACTION_JOURNAL_KEY set, records carry an HMAC with that key and every record must have
one: only a holder of the key could have written them. Without a key, records are chained by a
SHA-256 hash: that shows accidental or partial edits, but anyone who can write the file can
rewrite the chain from the changed record on (docs/durable-runs.md, "Audit").

Exit codes: 0 the chain holds, 1 it is broken or cannot be checked, 2 usage error.

Options:
  -h, --help      show this help`;

export async function auditVerifyCommand(args: string[], context: CliContext): Promise<number> {
  const command = "audit verify";
  const { values, positionals } = parseCommandArguments(command, args, {});
  if (values.help) {
    context.stdout.write(`${auditVerifyHelp}\n`);
    return 0;
  }
  if (positionals.length > 1) {
    throw new UsageError({ command, message: `give one journal file (got ${positionals.length})` });
  }
  const file = resolve(context.cwd, positionals[0] ?? defaultJournalPath);
  const { key } = journalSettings(context.env);
  const files = await chainFiles(file);
  const lines = await readLines(files.map((entry) => entry.path));
  const verification = verifyChain(lines, {
    key,
    rotatedStart: files[0]!.rotated,
    keyName: journalKeyVariable,
  });
  context.stdout.write(`${escapeForTerminal(report(verification, { files: files.length, key }))}\n`);
  return verification.broken ? 1 : 0;
}

/** The journal and its rotated files, oldest first (runs.3.jsonl, runs.2.jsonl, runs.1.jsonl, runs.jsonl). */
async function chainFiles(file: string): Promise<{ path: string; rotated: boolean }[]> {
  const extension = extname(basename(file));
  const stem = basename(file).slice(0, basename(file).length - extension.length);
  const rotated = new RegExp(`^${escapeRegExp(stem)}\\.(\\d+)${escapeRegExp(extension)}$`);
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch (error) {
    throw new CliError(
      `No journal at ${file}: ${(error as Error).message}. Pass the journal's path: codeaction audit verify FILE.`,
      {
        code: "journal",
        cause: error,
      },
    );
  }
  if (!names.includes(basename(file)) && !rotated.test(basename(file))) {
    throw new CliError(`No journal at ${file}. Pass the journal's path: codeaction audit verify FILE.`, {
      code: "journal",
    });
  }
  // Given a rotated file itself, only that file is checked.
  if (rotated.test(basename(file))) return [{ path: file, rotated: true }];
  const older = names
    .map((name) => ({ name, index: Number(rotated.exec(name)?.[1]) }))
    .filter((entry) => Number.isSafeInteger(entry.index))
    .sort((left, right) => right.index - left.index)
    .map((entry) => ({ path: join(dirname(file), entry.name), rotated: true }));
  return names.includes(basename(file)) ? [...older, { path: file, rotated: older.length > 0 }] : older;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

async function readLines(paths: string[]): Promise<LineOfFile[]> {
  const lines: LineOfFile[] = [];
  for (const path of paths) {
    const text = await readFile(path, "utf8");
    const split = text.split("\n");
    if (split.at(-1) === "") split.pop();
    for (const [index, line] of split.entries()) lines.push({ file: path, line: index + 1, text: line });
  }
  return lines;
}

function report(verification: Verification, options: { files: number; key: string | undefined }): string {
  const { records, unchained, broken, last, startsAt } = verification;
  if (broken) return `codeaction audit: the chain is broken: ${broken.message}`;
  const where = options.files > 1 ? ` in ${options.files} files` : "";
  const lines = [`codeaction audit: the chain holds: ${records} record${records === 1 ? "" : "s"}${where}`];
  if (records === 0) lines.push("no chained records yet");
  if (last)
    lines.push(
      `last record: ${last.seq}, tag ${last.tag} (keep it elsewhere: removing records from the end is shown only by comparing with it)`,
    );
  if (startsAt !== undefined)
    lines.push(
      `the chain starts at record ${startsAt}: the records before it were in rotated files no longer kept`,
    );
  if (unchained > 0)
    lines.push(`${unchained} older line(s) before the chain were written without it and are not covered`);
  lines.push(
    options.key === undefined
      ? "tags: SHA-256 hashes (no CODEACTION_JOURNAL_KEY): they show edits, but anyone who can write the file could rewrite the chain after an edit"
      : "tags: HMAC-SHA256 with CODEACTION_JOURNAL_KEY: only a holder of the key could have written these records",
  );
  return lines.join("\n");
}
