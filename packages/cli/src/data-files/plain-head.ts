// The head of a CSV or TSV file that holds no quote character, split at its line breaks and
// delimiters by hand: csv-parse would read it the same way, at a third of the speed (the typing
// sample of a big file is on the way to the first question's prompt: docs/performance.md).
import { open } from "node:fs/promises";
import type { Delimiter } from "./sniff-delimiter.ts";
import type { SourceRecord } from "./source-record.ts";

/** How far past the typing sample the record that crosses its end may go before csv-parse reads it instead. */
const lookaheadBytes = 64 * 1024;

/** A row of the plain head whose field count is not the header's: csv-parse reads the file again and reports it. */
export class NotPlainError extends Error {}

/**
 * The records of the file's first `sampleBytes` bytes (up to the end of the record that crosses
 * them; the whole file when it is no bigger), as csv-parse gives them with `bom`, `info` and
 * `skip_empty_lines`: the same cells, line numbers and end bytes. Undefined when the head is not
 * plain: it holds a quote character (`"`), line endings other than `\n` throughout or `\r\n`
 * throughout, or a record longer than the lookahead. The iteration throws NotPlainError at a row
 * whose field count differs from the header's (csv-parse names that error).
 */
export async function plainHead(
  file: string,
  options: { delimiter: Delimiter; sampleBytes: number },
): Promise<Iterable<SourceRecord> | undefined> {
  const head = await readHead(file, options.sampleBytes + lookaheadBytes);
  const end = headEnd(head, options.sampleBytes);
  if (end === undefined) return undefined;
  const text = head.subarray(0, end);
  const crlf = lineEndings(text);
  if (crlf === undefined || text.includes(34)) return undefined;
  return splitRecords(text, { delimiter: options.delimiter, crlf });
}

/** The file's first `bytes` bytes (fewer at its end), with `atEnd` set when they are all of it. */
async function readHead(file: string, bytes: number): Promise<Buffer & { atEnd?: boolean }> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(bytes + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === buffer.length) break;
    }
    const head: Buffer & { atEnd?: boolean } = buffer.subarray(0, Math.min(filled, bytes));
    head.atEnd = filled <= bytes;
    return head;
  } finally {
    await handle.close();
  }
}

/**
 * Where the head's records end: just after the first line break at or past `sampleBytes` (the
 * record a scan stops at: its end byte reaches the sample's size), else at the file's end.
 */
function headEnd(head: Buffer & { atEnd?: boolean }, sampleBytes: number): number | undefined {
  const lineBreak = head.indexOf(10, Math.max(0, sampleBytes - 1));
  if (lineBreak !== -1) return lineBreak + 1;
  return head.atEnd ? head.length : undefined;
}

/** False for `\n` line endings, true for `\r\n` throughout, undefined for anything else (a lone `\r`, a mix). */
function lineEndings(text: Buffer): boolean | undefined {
  const firstReturn = text.indexOf(13);
  if (firstReturn === -1) return false;
  for (let at = text.indexOf(10); at !== -1; at = text.indexOf(10, at + 1)) {
    if (text[at - 1] !== 13) return undefined;
  }
  for (let at = firstReturn; at !== -1; at = text.indexOf(13, at + 1)) {
    if (text[at + 1] !== 10) return undefined;
  }
  return true;
}

function* splitRecords(
  text: Buffer,
  options: { delimiter: Delimiter; crlf: boolean },
): Generator<SourceRecord> {
  const bom = text[0] === 0xef && text[1] === 0xbb && text[2] === 0xbf ? 3 : 0;
  const ending = options.crlf ? 2 : 1;
  let fields: number | undefined;
  let line = 0;
  for (let start = bom; start < text.length; ) {
    const lineBreak = text.indexOf(10, start);
    const end = lineBreak === -1 ? text.length : lineBreak + 1;
    const contentEnd = lineBreak === -1 ? text.length : lineBreak + 1 - ending;
    line += 1;
    if (contentEnd > start) {
      const record = text.toString("utf8", start, contentEnd).split(options.delimiter);
      fields ??= record.length;
      if (record.length !== fields) throw new NotPlainError(`line ${line} has ${record.length} fields`);
      yield { record, line, bytesRead: end, endByte: end };
    }
    start = end;
  }
}
