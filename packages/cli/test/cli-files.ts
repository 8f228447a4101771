import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** A replay file (`codeaction ask --replay FILE`) of one code-action reply per program, written in `folder`. */
export async function programReplay(folder: string, name: string, programs: string[]): Promise<string> {
  const path = join(folder, name);
  const replies = programs.map((program) => `Here is the program.\n\n\`\`\`python\n${program}\n\`\`\``);
  await writeFile(path, JSON.stringify({ replies }));
  return path;
}

/** The records of the journal in `cwd` (.codeaction/runs.jsonl, or a rotated `file`), oldest first. */
export async function journalRecords<Record = { [key: string]: unknown }>(
  cwd: string,
  file = "runs.jsonl",
): Promise<Record[]> {
  const text = await readFile(join(cwd, ".codeaction", file), "utf8");
  return text
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Record);
}
