import { createHash, createHmac } from "node:crypto";

/** The `prev` of a chain's first record. */
export const genesisTag = "0".repeat(64);

// A chain of JSON records, one a line: the CLI's journal and the file run store's log. Each line
// carries its place, the previous line's tag, and its own tag over its exact bytes.

/**
 * How a record is tied to the one before it: its place in the chain, the previous record's tag, and
 * how its own tag is made ("hmac-sha256" with a key, else a plain "sha256" hash).
 */
export type ChainLink = { seq: number; prev: string; alg: "hmac-sha256" | "sha256" };

/** The last record of a chain: what the next record links to. */
export type ChainEnd = { seq: number; tag: string };

const tagSuffix = /,"tag":"([0-9a-f]{64})"\}$/;
const lastLink =
  /"chain":\{"seq":(\d+),"prev":"[0-9a-f]{64}","alg":"(?:hmac-sha256|sha256)"\},"tag":"([0-9a-f]{64})"\}\s*$/;

export function tagOf(body: string, key: string | undefined): string {
  return key === undefined
    ? createHash("sha256").update(body).digest("hex")
    : createHmac("sha256", key).update(body).digest("hex");
}

/**
 * One journal line: the record's JSON with `chain` (seq, prev, alg) as its last key, then `tag`,
 * the HMAC or hash of exactly the bytes before it (closed with `}`). Any byte changed anywhere in
 * the line changes what its tag must be; the next record's `prev` ties the order.
 */
export function chainedLine(record: object, after: ChainEnd | undefined, key: string | undefined): string {
  const link: ChainLink = {
    seq: (after?.seq ?? 0) + 1,
    prev: after?.tag ?? genesisTag,
    alg: key === undefined ? "sha256" : "hmac-sha256",
  };
  const { chain: _chain, tag: _tag, ...content } = record as Record<string, unknown>;
  const body = JSON.stringify({ ...content, chain: link });
  return `${body.slice(0, -1)},"tag":"${tagOf(body, key)}"}`;
}

/** The chain's end as written in the last line of `text` (the tail of a journal), if it is a chained record. */
export function chainEndOf(text: string): ChainEnd | undefined {
  const match = lastLink.exec(text);
  return match ? { seq: Number(match[1]), tag: match[2]! } : undefined;
}

/** One line of a journal as read back: its link and tag, and whether the tag matches its bytes. */
export type ReadLine =
  | { kind: "chained"; link: ChainLink; tag: string; tagMatches: boolean; runId?: string }
  | { kind: "unchained"; runId?: string }
  | { kind: "unreadable"; reason: string };

/** Reads one line: a chained record (checked with `key` for an HMAC), an older unchained record, or neither. */
export function readLine(line: string, key: string | undefined): ReadLine {
  const suffix = tagSuffix.exec(line);
  if (!suffix) {
    const value = parseObject(line);
    if (value && !("chain" in value) && !("tag" in value)) return { kind: "unchained", ...runIdOf(value) };
    return { kind: "unreadable", reason: "it is not a chained record (its tag is missing or malformed)" };
  }
  const body = `${line.slice(0, suffix.index)}}`;
  const value = parseObject(body);
  const link = value?.chain as Partial<ChainLink> | undefined;
  if (
    !value ||
    typeof link !== "object" ||
    link === null ||
    !Number.isSafeInteger(link.seq) ||
    typeof link.prev !== "string" ||
    (link.alg !== "sha256" && link.alg !== "hmac-sha256")
  ) {
    return { kind: "unreadable", reason: "its content is not a record with a chain link" };
  }
  const tag = suffix[1]!;
  const tagMatches =
    link.alg === "sha256" ? tagOf(body, undefined) === tag : key !== undefined && tagOf(body, key) === tag;
  return { kind: "chained", link: link as ChainLink, tag, tagMatches, ...runIdOf(value) };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function runIdOf(value: Record<string, unknown>): { runId?: string } {
  return typeof value.runId === "string" ? { runId: value.runId } : {};
}
