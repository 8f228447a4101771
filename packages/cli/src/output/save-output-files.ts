// Files a program saved under /workspace/out, written to disk and listed on stderr (ask and chat).
import type { AgentResult } from "@codeaction/core";
import type { CliContext } from "../context.ts";
import type { JournalRecord } from "../journal/journal-record.ts";
import { escapeForTerminal } from "../terminal/escape-for-terminal.ts";
import { outputFolderFor, writeOutputFiles } from "./write-output-files.ts";

/** Writes the files that came back to disk, records where, and lists them (and any refusals) on stderr. */
export async function saveOutputFiles(
  result: AgentResult,
  record: JournalRecord | undefined,
  options: { out: string | undefined; context: CliContext },
): Promise<string[]> {
  const { context } = options;
  for (const refused of result.refusedFiles) {
    context.stderr.write(
      `codeaction: /workspace/out/${escapeForTerminal(refused.name, { keepNewlines: false })} did not come back: ${escapeForTerminal(refused.reason, { keepNewlines: false })}\n`,
    );
  }
  if (result.files.length === 0) return [];
  const folder = outputFolderFor(result.runId, { out: options.out, cwd: context.cwd });
  const paths = await writeOutputFiles(result.files, folder);
  paths.forEach((path, index) => {
    const recorded = record?.files?.[index];
    if (recorded) recorded.path = path;
    const file = result.files[index]!;
    const renamed = file.renamedFrom
      ? `; renamed from /workspace/out/${escapeForTerminal(file.renamedFrom, { keepNewlines: false })}`
      : "";
    context.stderr.write(
      `file: ${escapeForTerminal(path, { keepNewlines: false })} (${file.size} bytes, ${file.mediaType}${renamed})\n`,
    );
  });
  return paths;
}
