// Fails when a source file of a package (packages/*/src, tests aside) is over 400 lines, the house
// limit, unless the allow-list below names it with the issue that splits it. An entry for a file
// that is no longer over the limit fails too (take it off the list). Run by scripts/test.sh.
// Usage: node scripts/file-lengths.ts
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const maxFileLines = 400;

/**
 * Files over the limit today, each waiting for its split. Nothing is added here: a new file over
 * the limit is split along its seams instead.
 */
export const allowedLongFiles: Record<string, string> = {};

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|py)$/.test(name) && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Lines of text (a final newline ends the last line, it does not start another). */
export function lineCount(text: string): number {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** What is wrong: files over the limit not on the list, and entries of the list that are not. */
export function fileLengthProblems(lengths: Map<string, number>, allowed: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, lines] of lengths) {
    if (lines > maxFileLines && !(file in allowed)) {
      problems.push(`${file}: ${lines} lines, over ${maxFileLines}: split it along its seams`);
    }
  }
  for (const [file, reason] of Object.entries(allowed)) {
    const lines = lengths.get(file);
    if (lines === undefined)
      problems.push(`${file} (${reason}) is allowed but does not exist: take it off the list`);
    else if (lines <= maxFileLines) {
      problems.push(
        `${file} (${reason}) is ${lines} lines now: take it off the allow-list in scripts/file-lengths.ts`,
      );
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lengths = new Map<string, number>();
  for (const name of readdirSync(join(root, "packages"))) {
    const source = join(root, "packages", name, "src");
    try {
      statSync(source);
    } catch {
      continue;
    }
    for (const file of sourceFiles(source))
      lengths.set(relative(root, file), lineCount(readFileSync(file, "utf8")));
  }
  const problems = fileLengthProblems(lengths, allowedLongFiles);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exitCode = 1;
  else
    console.log(
      `${lengths.size} source files within ${maxFileLines} lines (${Object.keys(allowedLongFiles).length} allowed, each with its issue)`,
    );
}
