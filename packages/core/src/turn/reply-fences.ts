/**
 * The fenced blocks of a model's reply, found in one pass over its lines (issue 45 #7). A regular
 * expression with a lazy body (`([\s\S]*?)^\1$`) scans to the end of the reply for every opening
 * line that is never closed: quadratic, 19 s for 128 KiB of unclosed fences. Here each line is
 * classified once, and the closing line of an opening is found through a cursor per fence marker
 * that only moves forward: a marker with no closing line left is known at once.
 */

/** The longest reply read for a program or a search; a longer one is refused unread (see readReplyProgram). */
export const maxReplyCharacters = 256 * 1024;

/** An opening line's fence marker (three or more backticks or tildes) and the word after it. */
export type FenceOpening = { marker: string; tag: string; rest: string };

export type FencedBlock = { tag: string; body: string };

/** Counts the work of a scan (lines classified and cursor steps), for the test of its linear growth. */
export type ScanCounter = { steps: number };

const fenceLine = /^[ \t]*(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)(.*)$/;
const bareFence = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;

/** The lines of a reply, each without its "\n" (and the "\r" before it). */
function linesOf(reply: string): string[] {
  return reply.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/** The opening of a line that starts a fence, else undefined. */
export function fenceOpening(line: string): FenceOpening | undefined {
  const match = fenceLine.exec(line);
  if (!match) return undefined;
  return { marker: match[1] ?? "", tag: match[2] ?? "", rest: match[3] ?? "" };
}

/**
 * The closed blocks of `reply` whose opening line `accepts`, in order and not overlapping: an
 * opening line's block ends at the next line that is its marker alone (surrounding spaces and tabs
 * allowed); an opening with no such line opens nothing, and the next line is tried.
 */
export function fencedBlocks(
  reply: string,
  accepts: (opening: FenceOpening) => boolean,
  counter?: ScanCounter,
): FencedBlock[] {
  const lines = linesOf(reply);
  // Every line that is a fence marker alone, by marker, in order; and the cursor into each list.
  const closings = new Map<string, number[]>();
  lines.forEach((line, index) => {
    if (counter) counter.steps += 1;
    const marker = bareFence.exec(line)?.[1];
    if (marker === undefined) return;
    const list = closings.get(marker);
    if (list) list.push(index);
    else closings.set(marker, [index]);
  });
  const cursors = new Map<string, number>();
  const blocks: FencedBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    if (counter) counter.steps += 1;
    const opening = fenceOpening(lines[index] ?? "");
    if (!opening || !accepts(opening)) continue;
    const list = closings.get(opening.marker) ?? [];
    let cursor = cursors.get(opening.marker) ?? 0;
    while (cursor < list.length && (list[cursor] ?? 0) <= index) {
      cursor += 1;
      if (counter) counter.steps += 1;
    }
    cursors.set(opening.marker, cursor);
    const closing = list[cursor];
    if (closing === undefined) continue;
    blocks.push({ tag: opening.tag, body: lines.slice(index + 1, closing).join("\n") });
    index = closing;
  }
  return blocks;
}

/**
 * A block opened with ``` and a tag alone that the reply never closes (a reply cut off at its
 * length limit): the first such line, when no later line starts with ```; its body is the rest.
 */
export function unclosedBlock(reply: string): FencedBlock | undefined {
  const lines = linesOf(reply);
  const start = lines.findIndex((line) => /^[ \t]*```[ \t]*[A-Za-z0-9_+-]*[ \t]*$/.test(line));
  // The opening line must end in "\n": a reply's last line opens nothing.
  if (start < 0 || start === lines.length - 1) return undefined;
  const rest = lines.slice(start + 1);
  if (rest.some((line) => /^[ \t]*```/.test(line))) return undefined;
  const tag = /^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)/.exec(lines[start] ?? "")?.[1] ?? "";
  return { tag, body: rest.join("\n") };
}
