import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** A replay file (`codeaction ask --replay FILE`) of one code-action reply per program, written in `folder`. */
export async function programReplay(folder: string, name: string, programs: string[]): Promise<string> {
  const path = join(folder, name);
  const replies = programs.map((program) => `Here is the program.\n\n\`\`\`python\n${program}\n\`\`\``);
  await writeFile(path, JSON.stringify({ replies }));
  return path;
}

/**
 * The run records of the journal in `cwd` (.codeaction/runs.jsonl, or a rotated `file`), oldest
 * first: without its taken lines (`codeaction resume`'s, see journalTakes).
 */
export async function journalRecords<Record = { [key: string]: unknown }>(
  cwd: string,
  file = "runs.jsonl",
): Promise<Record[]> {
  const lines = await journalLines(cwd, file);
  return lines.filter((line) => line.taken === undefined) as Record[];
}

/** The taken lines of the journal in `cwd` (`codeaction resume` took a run): what each says. */
export async function journalTakes(
  cwd: string,
): Promise<{ runId: string; nonce: string; pid: number; processStart?: string }[]> {
  const lines = await journalLines(cwd, "runs.jsonl");
  return lines.flatMap((line) => (line.taken === undefined ? [] : [line.taken as never]));
}

async function journalLines(cwd: string, file: string): Promise<{ taken?: unknown }[]> {
  const text = await readFile(join(cwd, ".codeaction", file), "utf8");
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as { taken?: unknown });
}
