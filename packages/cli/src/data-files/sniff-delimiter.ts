import { parse } from "csv-parse/sync";

export type Delimiter = "," | ";" | "\t" | "|";

/** The delimiters `--csv` recognises, in order of preference when two fit equally well. */
export const delimiters: readonly Delimiter[] = [",", ";", "\t", "|"];

/**
 * Guesses the delimiter from the first part of a file. Each candidate parses the sample (quotes
 * respected, so a comma inside "Smith, John" does not count); a candidate fits when every complete
 * record has the same number of fields, more than one. The best fit has the most fields. A file
 * with one column gives ",".
 */
export function sniffDelimiter(sample: string): Delimiter {
  let best: { delimiter: Delimiter; fields: number } | undefined;
  for (const delimiter of delimiters) {
    const fields = consistentFieldCount(sample, delimiter);
    if (fields > 1 && (!best || fields > best.fields)) best = { delimiter, fields };
  }
  return best?.delimiter ?? ",";
}

function consistentFieldCount(sample: string, delimiter: Delimiter): number {
  // The sample may end inside a record: drop the last (possibly cut) line and retry on shorter
  // samples when a quote was left open by the cut.
  const lines = sample.split(/\r?\n/);
  const candidates = lines.length > 1 ? [lines.slice(0, -1).join("\n"), sample] : [sample];
  for (const text of candidates) {
    let records: string[][];
    try {
      records = parse(text, {
        delimiter,
        bom: true,
        skip_empty_lines: true,
        relax_column_count: true,
        to: 50,
      });
    } catch {
      continue;
    }
    if (records.length === 0) return 0;
    const width = records[0]!.length;
    return records.every((record) => record.length === width) ? width : 0;
  }
  return 0;
}
