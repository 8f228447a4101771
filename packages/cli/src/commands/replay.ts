import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { RunRecord as ReplayableRun } from "@codeaction/core";
import { parseCommandArguments } from "../arguments.ts";
import type { CliContext } from "../context.ts";
import { CliError } from "../errors/cli-error.ts";
import { UsageError } from "../errors/usage-error.ts";
import { defaultJournalPath } from "../journal/append.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { createProgress } from "../terminal/progress.ts";

export const replayHelp = `Usage: codeaction replay [RUN_ID] [--journal FILE]

Re-executes a run \`codeaction ask\` recorded in the journal: the answering program runs in a
fresh sandbox (the run's image, no network) with every tool call answered from the run's call
log. No model is asked and no tool is called: nothing live. Prints "reproduced" when the program
makes the same calls (tools and arguments, in order) and prints the same RESULT; else the first
difference. Default: the journal's last run that can be replayed.

Options:
  --journal FILE  the journal to read (default ${defaultJournalPath})
  --quiet         no progress on stderr
  -h, --help      show this help

Exit codes: 0 reproduced, 1 a difference (or the run cannot be replayed), 2 usage error.`;

type JournaledRun = { runId?: string; image?: string; replay?: ReplayableRun; replayOmitted?: string };

export async function replayCommand(args: string[], context: CliContext): Promise<number> {
  const command = "replay";
  const { values, positionals } = parseCommandArguments(command, args, {
    journal: { type: "string" },
    quiet: { type: "boolean" },
  });
  if (values.help) {
    context.stdout.write(`${replayHelp}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError({ command, message: "give at most one run id" });
  const journal = resolve(context.cwd, values.journal ?? defaultJournalPath);
  const run = await findRun(journal, positionals[0]);
  const progress = createProgress({ stream: context.stderr, quiet: values.quiet === true });
  progress.update(`replaying ${run.runId} in a fresh sandbox, every tool answered from its call log`);
  const { replayRun } = await import("@codeaction/core");
  const report = await replayRun(run.replay!, {
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

/** The run `runId` (else the last run that can be replayed) of the journal, with its replay record. */
async function findRun(
  journal: string,
  runId: string | undefined,
): Promise<JournaledRun & { runId: string }> {
  let text: string;
  try {
    text = await readFile(journal, "utf8");
  } catch (error) {
    throw new CliError(
      `Cannot read the journal ${journal}: ${(error as Error).message}. Pass --journal FILE.`,
      {
        code: "journal",
        cause: error,
      },
    );
  }
  const runs = text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as JournaledRun;
      } catch {
        return {};
      }
    });
  const found =
    runId === undefined
      ? runs.findLast((run) => run.replay !== undefined)
      : runs.findLast((run) => run.runId === runId);
  if (!found?.runId) {
    throw new CliError(
      runId === undefined
        ? `The journal ${journal} holds no run that can be replayed (code-action runs that answered). Run codeaction ask first.`
        : `The journal ${journal} holds no run ${runId}. Give a runId from it (codeaction ask --json shows one), or --journal FILE.`,
      { code: "journal" },
    );
  }
  if (!found.replay) {
    throw new CliError(
      `The run ${runId} cannot be replayed: ${found.replayOmitted ?? "its record holds no program and call log (only code-action runs that answered do)"}.`,
      { code: "journal" },
    );
  }
  return found as JournaledRun & { runId: string };
}
