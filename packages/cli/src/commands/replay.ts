import { resolve } from "node:path";
import type { RunRecord as ReplayableRun } from "@codeaction/core";
import { verifyChain } from "@codeaction/core/durable";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath, journalKeyVariable, journalSettings } from "../journal/append.ts";
import { type ReadJournal, readJournal } from "../journal/read-journal.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const replayHelp = `Usage: codeaction replay [RUN_ID] [--journal FILE]

Re-executes a run \`codeaction ask\` recorded in the journal: the answering program runs in a
fresh sandbox (the run's image, no network) with every tool call answered from the run's call
log. No model is asked and no tool is called: nothing live. Prints "reproduced" when the program
makes the same calls (tools and arguments, in order) and prints the same RESULT; else the first
difference. Default: the journal's last run that can be replayed. The journal's rotated files
(runs.1.jsonl, ...) are read too.

The record is checked against the journal's chain first (an HMAC with CODEACTION_JOURNAL_KEY,
else SHA-256 hashes; see codeaction audit verify): a record changed, removed, inserted or
reordered at or before it is refused, since it may not be the run that happened.

Options:
  --journal FILE  the journal to read (default ${defaultJournalPath})
  --unverified    replay a record whose chain is broken (a warning names the break)
  --quiet         no progress on stderr
  -h, --help      show this help

Exit codes: 0 reproduced, 1 a difference (or the run cannot be replayed), 2 usage error.`;

type JournaledRun = { runId?: string; image?: string; replay?: ReplayableRun; replayOmitted?: string };
type FoundRun = JournaledRun & { runId: string; replay: ReplayableRun; index: number };

export async function replayCommand(args: string[], context: CliContext): Promise<number> {
  const command = "replay";
  const { values, positionals } = parseCommandArguments(command, args, {
    journal: { type: "string" },
    quiet: { type: "boolean" },
    unverified: { type: "boolean" },
  });
  if (values.help) {
    context.stdout.write(`${replayHelp}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError({ command, message: "give at most one run id" });
  const journal = resolve(context.cwd, values.journal ?? defaultJournalPath);
  const read = await readJournal(journal, "Pass --journal FILE.");
  const run = findRun(read, journal, positionals[0]);
  const { key } = journalSettings(context.env);
  for (const warning of checkChain(read, run, { key, unverified: values.unverified === true })) {
    context.stderr.write(`codeaction replay: warning: ${escapeForTerminal(warning)}\n`);
  }
  const progress = createProgress({ stream: context.stderr, quiet: values.quiet === true });
  progress.update(`replaying ${run.runId} in a fresh sandbox, every tool answered from its call log`);
  const { replayRun } = await import("@codeaction/core");
  const report = await replayRun(run.replay, {
    sandbox: { network: "none", ...(run.image ? { image: run.image } : {}) },
  }).finally(() => progress.stop());
  if (report.status === "reproduced") {
    context.stdout.write(
      `reproduced: run ${report.runId}, ${report.calls} tool call(s) answered from the log, the same RESULT: ${escapeForTerminal(report.result, { keepNewlines: false })}\n`,
    );
    return 0;
  }
  context.stdout.write(`differs: run ${report.runId}: ${escapeForTerminal(report.difference)}\n`);
  return 1;
}

/** The run `runId` (else the last run that can be replayed) of the journal and its rotated files, and its line. */
function findRun(journal: ReadJournal, path: string, runId: string | undefined): FoundRun {
  for (let index = journal.lines.length - 1; index >= 0; index -= 1) {
    const run = parseRun(journal.lines[index]!.text);
    const match = runId === undefined ? run.replay !== undefined : run.runId === runId;
    if (!match || run.runId === undefined) continue;
    if (!run.replay) {
      throw new CliError(
        `The run ${runId} cannot be replayed: ${run.replayOmitted ?? "its record holds no program and call log (only code-action runs that answered do)"}.`,
        { code: "journal" },
      );
    }
    return { ...run, runId: run.runId, replay: run.replay, index };
  }
  throw new CliError(
    runId === undefined
      ? `The journal ${path} holds no run that can be replayed (code-action runs that answered). Run codeaction ask first.`
      : `The journal ${path} holds no run ${runId}. Give a runId from it (codeaction ask --json shows one), or --journal FILE.`,
    { code: "journal" },
  );
}

function parseRun(line: string): JournaledRun {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as JournaledRun) : {};
  } catch {
    return {};
  }
}

/**
 * The journal's chain up to and including the replayed record: a break at or before it means the
 * record (or one it links back to) was changed, removed, inserted or reordered since it was written,
 * and replaying it would reproduce an edited run, so it is refused unless `unverified`. What cannot
 * be checked (HMAC records without the key, records from before the chain) and a break after the
 * record are warnings.
 */
function checkChain(
  journal: ReadJournal,
  found: FoundRun,
  options: { key: string | undefined; unverified: boolean },
): string[] {
  const lines = journal.lines.slice(0, found.index + 1);
  const chain = verifyChain(lines, {
    key: options.key,
    rotatedStart: journal.files[0]?.rotated === true,
    keyName: journalKeyVariable,
  });
  const { broken } = chain;
  if (broken?.kind === "key-needed") {
    return [`the run's record was not checked against the journal's chain: ${broken.message}`];
  }
  if (broken) {
    const problem = `the journal's chain is broken at or before run ${found.runId}'s record: ${broken.message}`;
    if (!options.unverified) {
      throw new CliError(
        `Cannot replay: ${problem}. The record may not be the run that happened; codeaction audit verify names every break. To replay it anyway (a run edited on purpose), pass --unverified.`,
        { code: "journal" },
      );
    }
    return [`replaying an unverified record: ${problem}`];
  }
  if (found.index < chain.unchained) {
    return ["the run's record was written before the journal was chained: it is not covered by the chain"];
  }
  const after = verifyChain(journal.lines, {
    key: options.key,
    rotatedStart: journal.files[0]?.rotated === true,
    keyName: journalKeyVariable,
  }).broken;
  return after ? [`the journal's chain breaks after this run's record: ${after.message}`] : [];
}
