import stringWidth from "string-width";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Columns `text` takes on a terminal: a wide character (CJK, most emoji) two, a combining mark none. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

/** The start of `text` that fits in `columns`, cut between whole characters (graphemes). */
export function cutToWidth(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  let used = 0;
  let kept = "";
  for (const { segment } of graphemes.segment(text)) {
    const width = displayWidth(segment);
    if (used + width > columns) break;
    used += width;
    kept += segment;
  }
  return kept;
}
