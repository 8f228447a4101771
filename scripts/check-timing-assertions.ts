// Refuses wall-clock assertions in tests: `expect(<a time>).toBeLessThan(...)` and its kin, where
// the value asserted on is named as a time (ms, elapsed, seconds, took, duration, milliseconds) or
// is read from a clock (performance.now(), Date.now()). On a busy machine such bounds fail for
// reasons the feature has nothing to do with; speed is measured in bench/ (issue 36). A bound that
// is not a speed (CPU time against the run's own wall time: the CPU limit) says so on its line or
// the line before: `// timing-lint: allowed (<why>)`. Run by scripts/test.sh.
// Usage: node scripts/check-timing-assertions.ts [folder...]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Words that name a time, after splitting an identifier at its camelCase humps and underscores. */
const timeWords = new Set([
  "ms",
  "elapsed",
  "second",
  "seconds",
  "took",
  "duration",
  "durations",
  "millis",
  "milliseconds",
]);
const clockReads = /\b(?:performance\.now|Date\.now|process\.hrtime(?:\.bigint)?)\s*\(/;
const upperBounds = /^\s*\.\s*(?:not\s*\.\s*)?(toBeLessThan|toBeLessThanOrEqual)\s*\(/;

export type TimingAssertion = { file: string; line: number; text: string };

/** The words of the identifiers in `code`: `runMs` gives run and ms, `wall_seconds` wall and seconds. */
function wordsOf(code: string): string[] {
  const identifiers = code.match(/[A-Za-z_$][\w$]*/g) ?? [];
  return identifiers.flatMap((identifier) =>
    identifier
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
      .split(/[\s_$]+/)
      .filter(Boolean)
      .map((word) => word.toLowerCase()),
  );
}

/** The index just past the parenthesis that closes the one at `open` (or -1). */
function closingParenthesis(text: string, open: number): number {
  let depth = 0;
  for (let index = open; index < text.length; index += 1) {
    const character = text[index];
    if (character === "(") depth += 1;
    else if (character === ")") {
      depth -= 1;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * The text with the insides of strings and comments blanked (same length, newlines kept): an
 * assertion quoted in a string or a comment is not one. Quotes end at the line's end; templates may
 * span lines.
 */
export function codeOnly(text: string): string {
  const characters = [...text];
  let index = 0;
  const blankUntil = (end: (character: string) => boolean) => {
    for (index += 1; index < characters.length; index += 1) {
      const character = characters[index] ?? "";
      if (character === "\\") {
        characters[index] = " ";
        if (characters[index + 1] !== "\n") characters[index + 1] = " ";
        index += 1;
        continue;
      }
      if (end(character)) return;
      if (character !== "\n") characters[index] = " ";
    }
  };
  for (; index < characters.length; index += 1) {
    const character = characters[index];
    const next = characters[index + 1];
    if (character === "/" && next === "/") blankUntil((current) => current === "\n");
    else if (character === "/" && next === "*") {
      blankUntil((current) => current === "*" && characters[index + 1] === "/");
    } else if (character === '"' || character === "'") {
      blankUntil((current) => current === character || current === "\n");
    } else if (character === "`") blankUntil((current) => current === "`");
  }
  return characters.join("");
}

/** Every `expect(<time>)` followed by an upper bound in one file's text. */
export function findTimingAssertions(source: string, file = "<text>"): TimingAssertion[] {
  const found: TimingAssertion[] = [];
  const text = codeOnly(source);
  for (const match of text.matchAll(/\bexpect\s*\(/g)) {
    const open = (match.index ?? 0) + match[0].length - 1;
    const close = closingParenthesis(text, open);
    if (close < 0) continue;
    if (!upperBounds.test(text.slice(close, close + 60))) continue;
    // The value asserted on: the first argument (a message may follow it).
    const argument = text.slice(open + 1, close - 1);
    const valueText = argument.split(/,(?![^(]*\))/)[0] ?? argument;
    const named = wordsOf(valueText).some((word) => timeWords.has(word));
    if (!named && !clockReads.test(valueText)) continue;
    const line = text.slice(0, match.index).split("\n").length;
    const end = text.indexOf("\n", close);
    const lineStart = source.lastIndexOf("\n", source.lastIndexOf("\n", match.index - 1) - 1) + 1;
    if (/\/\/ timing-lint: allowed \(.+\)/.test(source.slice(lineStart, end < 0 ? undefined : end))) continue;
    found.push({ file, line, text: source.slice(match.index, end < 0 ? undefined : end).trim() });
  }
  return found;
}

/** Test sources under `folder`: *.test.ts files and the tests/ tree's helpers (bench/ and node_modules aside). */
function testSources(folder: string): string[] {
  const inTests = relative(root, folder).split(sep)[0] === "tests";
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) {
      if (name === "node_modules" || name === "dist" || name.startsWith(".")) return [];
      return relative(root, path) === "bench" ? [] : testSources(path);
    }
    return name.endsWith(".test.ts") || (inTests && name.endsWith(".ts")) ? [path] : [];
  });
}

function main(folders: string[]): number {
  const files = folders.flatMap((folder) => testSources(resolve(root, folder)));
  const found = files.flatMap((file) =>
    findTimingAssertions(readFileSync(file, "utf8"), relative(root, file)),
  );
  for (const item of found) console.error(`${item.file}:${item.line}: a wall-clock assertion: ${item.text}`);
  if (found.length > 0) {
    console.error(
      "Tests assert what happened, not how fast: keep the functional check and measure the time in bench/ (issue 36).",
    );
    return 1;
  }
  console.log(`no wall-clock assertions in ${files.length} files`);
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const folders = process.argv.slice(2);
  process.exitCode = main(folders.length > 0 ? folders : ["packages", "tests", "examples", "scripts"]);
}
