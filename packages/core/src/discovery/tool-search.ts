import { buildStubs, type StubbedTool } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";

/**
 * Lexical search over a tool catalogue, with no model and no service: BM25 over each tool's words.
 * A tool's words are its Python function name and its own name split at underscores, dashes, dots
 * and case changes (counted three times: names say the most), its description, its server (origin),
 * and its argument names and their descriptions. A query that is exactly a function or tool name
 * ranks that tool first.
 */

/** One ranked match: the tool, its stub (the Python name and signature), and its score. */
export type ToolSearchMatch = { tool: ToolSpec; stub: StubbedTool; score: number };

/** BM25 search over a tool catalogue: `search(query, { limit })`, best first, and every entry. */
export type ToolSearch = {
  /** The best matches for `query`, best first; tools that share no word with it are left out. */
  search(query: string, options?: { limit?: number }): ToolSearchMatch[];
  /** Every tool with its stub, in the catalogue's order. */
  readonly entries: ReadonlyArray<{ tool: ToolSpec; stub: StubbedTool }>;
};

/** BM25's usual constants: term-frequency saturation and length normalisation. */
const saturation = 1.2;
const lengthWeight = 0.75;
const nameRepeats = 3;
const defaultLimit = 5;

const stopWords = new Set(
  "a an and are as at be by for from get has in is it of on or set the this to with".split(" "),
);

/**
 * The words of a text: split at anything but letters, marks and digits of any script, and at case
 * changes, in lower case, a plural's s dropped. A run of Chinese or Japanese characters (written
 * without spaces) becomes its overlapping pairs of characters ("天气预报": 天气, 气预, 预报).
 */
export function searchWords(text: string): string[] {
  return text
    .normalize("NFKC")
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{M}\p{N}]+/u)
    .flatMap(unspacedPairs)
    .filter((word) => word.length > 0 && !stopWords.has(word))
    .map(stem);
}

const unspacedRun = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

/** A word with its Chinese and Japanese runs turned into their pairs of characters. */
function unspacedPairs(word: string): string[] {
  if (!unspacedRun.test(word)) return [word];
  unspacedRun.lastIndex = 0;
  const words = word.split(unspacedRun).filter(Boolean);
  for (const [run] of word.matchAll(unspacedRun)) {
    const characters = [...run];
    if (characters.length === 1) words.push(run);
    for (let index = 0; index + 1 < characters.length; index += 1) {
      words.push(`${characters[index]}${characters[index + 1]}`);
    }
  }
  return words;
}

/** A light stemmer, enough for "orders"/"order", "currencies"/"currency", "searching"/"search". */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1);
  return word;
}

/** The words BM25 counts for one tool (its names repeated, see above). */
function documentWords(tool: ToolSpec, stub: StubbedTool): string[] {
  const names = [...searchWords(stub.functionName), ...searchWords(tool.name)];
  const argumentText = Object.entries(tool.inputSchema.properties ?? {})
    .map(([name, schema]) => `${name} ${typeof schema.description === "string" ? schema.description : ""}`)
    .join(" ");
  return [
    ...Array.from({ length: nameRepeats }, () => names).flat(),
    ...searchWords(tool.description),
    ...searchWords(tool.origin),
    ...searchWords(argumentText),
  ];
}

/** A search over `tools` (their stubs are built here unless given, in the same order). */
export function createToolSearch(tools: ToolSpec[], stubs: StubbedTool[] = buildStubs(tools)): ToolSearch {
  const entries = tools.map((tool, index) => ({ tool, stub: stubs[index] as StubbedTool }));
  const counts = entries.map(({ tool, stub }) => countWords(documentWords(tool, stub)));
  const lengths = counts.map((count) => [...count.values()].reduce((sum, value) => sum + value, 0));
  const averageLength = lengths.reduce((sum, value) => sum + value, 0) / Math.max(1, lengths.length);
  const documentFrequency = new Map<string, number>();
  for (const count of counts) {
    for (const word of count.keys()) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  }
  const inverse = (word: string) => {
    const frequency = documentFrequency.get(word) ?? 0;
    return Math.log(1 + (entries.length - frequency + 0.5) / (frequency + 0.5));
  };

  return {
    entries,
    search(query, options = {}) {
      const limit = options.limit ?? defaultLimit;
      const exact = query.trim().toLowerCase();
      const queryWords = [...new Set(searchWords(query))];
      const matches: ToolSearchMatch[] = [];
      entries.forEach((entry, index) => {
        const count = counts[index] as Map<string, number>;
        const length = lengths[index] ?? 0;
        let score = 0;
        for (const word of queryWords) {
          const frequency = count.get(word) ?? 0;
          if (frequency === 0) continue;
          const normalised = saturation * (1 - lengthWeight + (lengthWeight * length) / averageLength);
          score += (inverse(word) * frequency * (saturation + 1)) / (frequency + normalised);
        }
        const named =
          entry.stub.functionName.toLowerCase() === exact || entry.tool.name.toLowerCase() === exact;
        if (named) score += 1000;
        if (score > 0) matches.push({ ...entry, score });
      });
      // Equal scores keep the catalogue's order (Array.prototype.sort is stable).
      return matches.sort((left, right) => right.score - left.score).slice(0, limit);
    },
  };
}

function countWords(words: string[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const word of words) count.set(word, (count.get(word) ?? 0) + 1);
  return count;
}
