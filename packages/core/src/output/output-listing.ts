// Runs output-collector.py in one exec and checks what it sends: the records of /workspace/out.
import { readFileSync } from "node:fs";
import type { SandboxSession } from "@codeaction/sandbox";
import { coreAssets } from "../core-assets.ts";

/** Caps on the walk of /workspace/out, besides the caller's limits on the files that come back. */
export const outputWalkCaps = {
  /** Entries looked at in all folders together; the listing stops there. */
  maxEntries: 10_000,
  /** Folders opened; the walk stops there. */
  maxFolders: 1_000,
  /** Folders nest at most this deep (counting the file's own part); deeper ones are refused, not walked. */
  maxDepth: 4,
  /** The collector's own time budget; the walk and the reads stop when it is spent. */
  budgetSeconds: 3,
  /** Refusals the collector reports one by one; it counts the rest. */
  maxRefusals: 50,
} as const;

/** The host's own deadline for the collector's exec (its budget, plus its start-up on a busy machine). */
const hostDeadlineMs = (outputWalkCaps.budgetSeconds + 7) * 1000;
/** Room for the record lines besides the files' bytes. */
const recordRoomBytes = 1024 * 1024;
const maxLineBytes = 64 * 1024;
const maxNameBytes = 255;

/** A file's bytes, or a refused entry (kind: why), with its name as raw bytes, one Buffer per part. */
export type ListedRecord =
  | { type: "file"; parts: Buffer[]; content: Buffer }
  | { type: "refused"; parts: Buffer[]; kind: string; size?: number };

/** How the walk ended: its counts, and why it stopped early (caps, time, a broken listing). */
export type ListingEnd = { entries: number; folders: number; refused: number; stopped?: string };

export type OutputListing = { records: ListedRecord[]; end: ListingEnd };

export type ListingLimits = { maxFileBytes: number; maxTotalBytes: number; maxFiles: number };

let collectorSource: string | undefined;

/**
 * Lists and reads /workspace/out in ONE exec (output-collector.py). Its output is capped as it
 * arrives, and every record is checked again here: names (raw bytes, at most the depth), sizes
 * against the limits, the bytes present. A collector that overruns the deadline is killed, and
 * what arrived complete is kept.
 */
export async function listOutputDirectory(
  session: Pick<SandboxSession, "spawn">,
  directory: string,
  limits: ListingLimits,
): Promise<OutputListing> {
  collectorSource ??= readFileSync(coreAssets.path("output-collector.py"), "utf8");
  const settings = { directory, ...outputWalkCaps, ...limits };
  const collector = session.spawn(["python3", "-I", "-S", "-c", collectorSource, JSON.stringify(settings)]);
  collector.stdin.end();
  const cap = limits.maxTotalBytes + recordRoomBytes;
  const parser = new RecordParser(limits);
  let received = 0;
  let overflow = false;
  collector.stdout.on("data", (chunk: Buffer) => {
    received += chunk.length;
    if (received > cap) {
      if (!overflow) void collector.kill().catch(() => undefined);
      overflow = true;
      return;
    }
    parser.push(chunk);
  });
  collector.stderr.resume();
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    collector.exit.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), hostDeadlineMs);
    }),
  ]);
  clearTimeout(timer);
  if (!inTime) await collector.kill().catch(() => undefined);
  const listing = parser.finish();
  if (overflow) listing.end.stopped = "overflow";
  else if (!inTime) listing.end.stopped = "deadline";
  return listing;
}

/**
 * The collector's records, checked as they arrive: a file's bytes go straight into a buffer of its
 * announced size (no second copy of the output is ever held). A malformed record ends the listing
 * (stopped: "malformed"); no end record means the collector did not finish ("unfinished").
 */
export class RecordParser {
  readonly records: ListedRecord[] = [];
  private end: ListingEnd | undefined;
  private broken = false;
  private line: Buffer[] = [];
  private lineBytes = 0;
  private file: { parts: Buffer[]; content: Buffer; filled: number } | undefined;
  private files = 0;
  private totalBytes = 0;

  private readonly limits: ListingLimits;

  constructor(limits: ListingLimits) {
    this.limits = limits;
  }

  push(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length && !this.broken && !this.end) {
      if (this.file) {
        offset = this.fill(this.file, chunk, offset);
        continue;
      }
      const newline = chunk.indexOf(0x0a, offset);
      const stop = newline < 0 ? chunk.length : newline;
      this.lineBytes += stop - offset;
      if (this.lineBytes > maxLineBytes) {
        this.broken = true;
        return;
      }
      this.line.push(chunk.subarray(offset, stop));
      offset = stop;
      if (newline < 0) return;
      offset += 1;
      const line = Buffer.concat(this.line);
      this.line = [];
      this.lineBytes = 0;
      this.take(parseLine(line));
    }
    if (offset < chunk.length && this.end) this.broken = true;
  }

  /** What was read: the records, and how the listing ended. */
  finish(): OutputListing {
    if (this.broken)
      return { records: this.records, end: { entries: 0, folders: 0, refused: 0, stopped: "malformed" } };
    return {
      records: this.records,
      end: this.end ?? { entries: 0, folders: 0, refused: 0, stopped: "unfinished" },
    };
  }

  private fill(
    file: { parts: Buffer[]; content: Buffer; filled: number },
    chunk: Buffer,
    offset: number,
  ): number {
    const taken = Math.min(file.content.length - file.filled, chunk.length - offset);
    chunk.copy(file.content, file.filled, offset, offset + taken);
    file.filled += taken;
    if (file.filled === file.content.length) {
      this.records.push({ type: "file", parts: file.parts, content: file.content });
      this.file = undefined;
    }
    return offset + taken;
  }

  private take(record: ParsedLine | undefined): void {
    if (!record) {
      this.broken = true;
    } else if (record.type === "end") {
      this.end = record.end;
    } else if (record.type === "refused") {
      this.records.push(record);
    } else {
      this.files += 1;
      this.totalBytes += record.size;
      const { maxFiles, maxFileBytes, maxTotalBytes } = this.limits;
      if (this.files > maxFiles || record.size > maxFileBytes || this.totalBytes > maxTotalBytes) {
        this.broken = true;
        return;
      }
      const file = { parts: record.parts, content: Buffer.alloc(record.size), filled: 0 };
      if (record.size === 0) this.records.push({ type: "file", parts: file.parts, content: file.content });
      else this.file = file;
    }
  }
}

/** The records of a whole output at once (RecordParser). */
export function parseRecords(output: Buffer, limits: ListingLimits): OutputListing {
  const parser = new RecordParser(limits);
  parser.push(output);
  return parser.finish();
}

type ParsedLine =
  | { type: "file"; parts: Buffer[]; size: number }
  | { type: "refused"; parts: Buffer[]; kind: string; size?: number }
  | { type: "end"; end: ListingEnd };

function parseLine(line: Buffer): ParsedLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (record.type === "end") {
    const counts = [record.entries, record.folders, record.refused];
    if (!counts.every(isCount)) return undefined;
    const stopped = typeof record.stopped === "string" ? record.stopped.slice(0, 20) : undefined;
    const [entries, folders, refused] = counts as number[];
    return {
      type: "end",
      end: { entries: entries!, folders: folders!, refused: refused!, ...(stopped ? { stopped } : {}) },
    };
  }
  const parts = nameParts(record.parts, record.type === "refused" ? 0 : 1);
  if (!parts) return undefined;
  if (record.type === "file" && isCount(record.size)) return { type: "file", parts, size: record.size };
  if (record.type === "refused" && typeof record.kind === "string") {
    const kind = record.kind.slice(0, 20);
    return { type: "refused", parts, kind, ...(isCount(record.size) ? { size: record.size } : {}) };
  }
  return undefined;
}

/** A name's parts from hex, each 1..255 bytes, no "/" or NUL, never "." or "..". */
function nameParts(value: unknown, minimum: number): Buffer[] | undefined {
  if (!Array.isArray(value) || value.length < minimum || value.length > outputWalkCaps.maxDepth)
    return undefined;
  const parts: Buffer[] = [];
  for (const item of value) {
    if (typeof item !== "string" || !/^(?:[0-9a-f]{2})+$/.test(item) || item.length > maxNameBytes * 2) {
      return undefined;
    }
    const part = Buffer.from(item, "hex");
    if (
      part.includes(0x2f) ||
      part.includes(0) ||
      part.equals(Buffer.from(".")) ||
      part.equals(Buffer.from(".."))
    ) {
      return undefined;
    }
    parts.push(part);
  }
  return parts;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}
