import { type ChainLink, genesisTag, type ReadLine, readLine } from "./record-chain.ts";

/** One line of the files verified, oldest first. */
export type LineOfFile = { file: string; line: number; text: string };

/** How a chain breaks at a record. */
export type BreakKind = "changed" | "removed" | "inserted" | "reordered" | "unsigned" | "key-needed";

/** Where the chain first breaks, and how. */
export type ChainBreak = {
  kind: BreakKind;
  file: string;
  line: number;
  /** The record's seq as written (when it could be read). */
  seq?: number;
  runId?: string;
  message: string;
};

/** What `verifyChain` found: the records that verified, and the first break, if any. */
export type Verification = {
  records: number;
  /** Lines before the first chained record (written by a codeaction without the chain). */
  unchained: number;
  alg?: ChainLink["alg"];
  /** Set when the chain starts after seq 1 in a rotated file: records before it were rotated out. */
  startsAt?: number;
  last?: { seq: number; tag: string };
  broken?: ChainBreak;
};

/**
 * Walks the chain: every record's tag must match its bytes (an HMAC with `key`; with a key, a
 * record with a plain hash is refused as unsigned), its seq must follow the one before, and its
 * `prev` must be that record's tag. The first line where this fails is named with what happened
 * there: changed, removed, inserted or reordered. `rotatedStart`: the first file is a rotated one,
 * whose first record may link to a file no longer kept.
 */
export function verifyChain(
  lines: LineOfFile[],
  options: { key: string | undefined; rotatedStart: boolean; keyName?: string },
): Verification {
  const read = lines.map((line) => readLine(line.text, options.key));
  const result: Verification = { records: 0, unchained: 0 };
  let previous: { seq: number; tag: string; line: LineOfFile } | undefined;
  for (const [index, entry] of read.entries()) {
    const line = lines[index]!;
    if (entry.kind === "unchained" && previous === undefined) {
      result.unchained += 1;
      continue;
    }
    const broken = checkLine({ entry, line, previous, index, read, lines, options, result });
    if (broken) return { ...result, broken };
    if (entry.kind !== "chained") continue;
    result.records += 1;
    result.alg = entry.link.alg;
    previous = { seq: entry.link.seq, tag: entry.tag, line };
  }
  if (previous) result.last = { seq: previous.seq, tag: previous.tag };
  return result;
}

type Previous = { seq: number; tag: string; line: LineOfFile };

type LineContext = {
  entry: ReadLine;
  line: LineOfFile;
  previous: Previous | undefined;
  index: number;
  read: ReadLine[];
  lines: LineOfFile[];
  options: { key: string | undefined; rotatedStart: boolean; keyName?: string };
  result: Verification;
};

/** A record as named in a break: its seq and run, and where it is. */
type Named = { file: string; line: number; seq: number; runId?: string };

function checkLine(context: LineContext): ChainBreak | undefined {
  const { entry, line } = context;
  const at = `${line.file} line ${line.line}`;
  if (entry.kind !== "chained") {
    const reason = entry.kind === "unreadable" ? entry.reason : "it carries no chain link";
    return { kind: "changed", file: line.file, line: line.line, message: `${at} was changed: ${reason}` };
  }
  const named: Named = {
    file: line.file,
    line: line.line,
    seq: entry.link.seq,
    ...(entry.runId ? { runId: entry.runId } : {}),
  };
  const record = `record ${entry.link.seq}${entry.runId ? ` (run ${entry.runId})` : ""} at ${at}`;
  return checkTag(context, entry, named, record) ?? checkLink(context, entry, named, record);
}

/** The record's own tag: of the right kind for the key, and matching its bytes. */
function checkTag(
  context: LineContext,
  entry: Extract<ReadLine, { kind: "chained" }>,
  named: Named,
  record: string,
): ChainBreak | undefined {
  const { key } = context.options;
  const keyName = context.options.keyName ?? "the key";
  if (key === undefined && entry.link.alg === "hmac-sha256") {
    const message = `${record} is signed with an HMAC: set ${keyName} to the key it was written with to verify it`;
    return { kind: "key-needed", ...named, message };
  }
  if (key !== undefined && entry.link.alg !== "hmac-sha256") {
    const message = `${record} is not signed with the key: it has a plain hash only (written without ${keyName}, or forged)`;
    return { kind: "unsigned", ...named, message };
  }
  if (!entry.tagMatches) {
    // A wrong key fails the first HMAC record already: say so there.
    const wrongKey =
      entry.link.alg === "hmac-sha256" && context.previous === undefined
        ? ` (or ${keyName} is not the key it was written with)`
        : "";
    return {
      kind: "changed",
      ...named,
      message: `${record} was changed: its content does not match its tag${wrongKey}`,
    };
  }
  return undefined;
}

/** The record's place: the seq after the previous record's, and `prev` equal to that record's tag. */
function checkLink(
  context: LineContext,
  entry: Extract<ReadLine, { kind: "chained" }>,
  named: Named,
  record: string,
): ChainBreak | undefined {
  const { previous, options, result } = context;
  const { seq, prev } = entry.link;
  const at = `${named.file} line ${named.line}`;
  if (previous === undefined && seq === 1 && prev === genesisTag) return undefined;
  if (previous === undefined && options.rotatedStart && result.unchained === 0) {
    // The oldest file kept is a rotated one: its first record links to a file no longer kept.
    result.startsAt = seq;
    return undefined;
  }
  if (previous !== undefined && seq === previous.seq + 1 && prev === previous.tag) return undefined;
  const expected = (previous?.seq ?? 0) + 1;
  if (seq > expected) {
    const later = context.read.findIndex(
      (other, index) => index > context.index && other.kind === "chained" && other.link.seq === expected,
    );
    if (later !== -1) {
      const where = context.lines[later]!;
      const message = `records were reordered: ${at} holds record ${seq} where record ${expected} belongs; record ${expected} is at ${where.file} line ${where.line}`;
      return { kind: "reordered", ...named, message };
    }
    const missing =
      seq - expected === 1
        ? `record ${expected} was removed`
        : `records ${expected} to ${seq - 1} were removed`;
    const after = previous === undefined ? "as the first record" : `right after record ${previous.seq}`;
    return { kind: "removed", ...named, message: `${missing}: ${at} holds record ${seq}, ${after}` };
  }
  if (previous !== undefined && seq <= previous.seq) {
    const message = `records were reordered or repeated: ${record} comes after record ${previous.seq}`;
    return { kind: "reordered", ...named, message };
  }
  // The right seq, linked to another tag: the record before it is not the one it was chained to.
  const before = previous
    ? `the record before it (${previous.line.file} line ${previous.line.line})`
    : "the start";
  return {
    kind: "inserted",
    ...named,
    message: `${record} does not link to ${before}: a record there was inserted or replaced`,
  };
}
