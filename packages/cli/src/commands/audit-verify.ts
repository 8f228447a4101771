import { resolve } from "node:path";
import { type Verification, verifyChain } from "@codeaction/core/durable";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath, journalKeyVariable, journalSettings } from "../journal/append.ts";
import { readJournal } from "../journal/read-journal.ts";
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
  const { files, lines } = await readJournal(file, "Pass the journal's path: codeaction audit verify FILE.");
  const verification = verifyChain(lines, {
    key,
    rotatedStart: files[0]!.rotated,
    keyName: journalKeyVariable,
  });
  context.stdout.write(`${escapeForTerminal(report(verification, { files: files.length, key }))}\n`);
  return verification.broken ? 1 : 0;
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
