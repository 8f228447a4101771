import type { SandboxSession } from "@codeaction/sandbox";
import { lookup } from "mime-types";
import { type ListedRecord, type ListingEnd, listOutputDirectory, outputWalkCaps } from "./output-listing.ts";
import { HostPaths, sanitisePart, showName } from "./output-names.ts";

export { sanitiseName } from "./output-names.ts";

/** Where a program saves files that should come back with its answer. */
export const outputDirectory = "/workspace/out";

/** A file a program saved under /workspace/out, brought back to the host. */
export type OutputFile = {
  /**
   * The path under /workspace/out, sanitised: folders joined with "/", each part [A-Za-z0-9._-],
   * unique among the run's files and folders without regard to case.
   */
  name: string;
  size: number;
  /** From the name's extension; application/octet-stream when unknown. */
  mediaType: string;
  bytes: Uint8Array;
  /** The name in the container (bytes that are not UTF-8 shown as `\xNN`), when `name` differs from it. */
  renamedFrom?: string;
};

/** An entry of /workspace/out that did not come back, and why. */
export type RefusedOutputFile = { name: string; reason: string };

/** Limits on what comes back from /workspace/out (`codeAction.outputFiles`): bytes per file, in total, and files. */
export type OutputFileLimits = {
  /** Largest single file. */
  maxFileBytes: number;
  /** Largest sum of the files that come back. */
  maxTotalBytes: number;
  /** Most files that come back. */
  maxFiles: number;
};

/** The default limits on files brought back from /workspace/out. */
export const defaultOutputFileLimits: OutputFileLimits = {
  maxFileBytes: 10 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
  maxFiles: 20,
};

export type CollectedFiles = { files: OutputFile[]; refused: RefusedOutputFile[] };

/** The name a note about the walk itself (not one entry) is reported under. */
export const walkNoteName = "(the rest of the tree)";

/**
 * Brings back what the program saved under /workspace/out, after it has ended (no process of it
 * is left to swap files), in ONE exec that lists and reads the whole tree (output-listing.ts).
 * Regular files only: links, FIFOs, devices and sockets are refused and reported, never followed
 * or opened; so is /workspace/out itself when it is a link. Names travel as raw bytes; a file is
 * opened without following links and must still be the file (and size) the listing saw. The walk
 * stops at caps on entries, folders, depth and time, and a note says what was left behind.
 */
export async function collectOutputFiles(
  session: Pick<SandboxSession, "spawn">,
  limits: OutputFileLimits = defaultOutputFileLimits,
): Promise<CollectedFiles> {
  const listing = await listOutputDirectory(session, outputDirectory, limits);
  const collected: CollectedFiles = { files: [], refused: [] };
  const paths = new HostPaths();
  for (const record of listing.records) {
    if (record.type === "refused") {
      refuse(collected, record.parts, reasonFor(record, limits));
      continue;
    }
    const name = paths.fileName(record.parts);
    const original = record.parts.map(showName).join("/");
    collected.files.push({
      name,
      size: record.content.length,
      mediaType: mediaTypeOf(name),
      bytes: new Uint8Array(record.content.buffer, record.content.byteOffset, record.content.length),
      ...(name === original ? {} : { renamedFrom: original }),
    });
  }
  noteWhatWasLeft(collected, listing.end);
  return collected;
}

/** Refusals kept per run; one more entry counts the rest. */
const maxRefusals = outputWalkCaps.maxRefusals;

function refuse(collected: CollectedFiles, parts: Buffer[], reason: string): void {
  const name = parts.length === 0 ? "out" : parts.map((part) => sanitisePart(showName(part))).join("/");
  if (collected.refused.length < maxRefusals) collected.refused.push({ name, reason });
}

function reasonFor(record: Extract<ListedRecord, { type: "refused" }>, limits: OutputFileLimits): string {
  const size = record.size ?? 0;
  switch (record.kind) {
    case "link":
      return "it is a link; only regular files come back";
    case "other":
      return "it is a FIFO, device or socket; only regular files come back";
    case "top-link":
      return `${outputDirectory} is a link, not a folder; it was not read`;
    case "top-not-folder":
      return `${outputDirectory} is not a folder; it was not read`;
    case "depth":
      return `folders nest deeper than ${outputWalkCaps.maxDepth} levels`;
    case "max-files":
      return `over the limit of ${limits.maxFiles} files (outputFiles.maxFiles)`;
    case "file-bytes":
      return `${size} bytes, over the limit of ${limits.maxFileBytes} per file (outputFiles.maxFileBytes)`;
    case "total-bytes":
      return `the files would total over ${limits.maxTotalBytes} bytes (outputFiles.maxTotalBytes)`;
    case "changed":
    case "changed-type":
    case "changed-size":
      return "it changed between the listing and the read (another file, type or size); it was not read";
    default:
      return "it could not be read";
  }
}

/** One note for refusals past the cap, and one for the part of the tree the walk did not reach. */
function noteWhatWasLeft(collected: CollectedFiles, end: ListingEnd): void {
  if (end.refused > collected.refused.length) {
    collected.refused.push({
      name: "...",
      reason: `${end.refused - collected.refused.length} more entries were refused; only the first ones are listed`,
    });
  }
  const why = stopReasons[end.stopped ?? ""];
  if (why) {
    const counted =
      end.stopped === "malformed" || end.stopped === "unfinished"
        ? ""
        : ` after ${end.folders} folders and ${end.entries} entries`;
    collected.refused.push({
      name: walkNoteName,
      reason: `${why}${counted}: anything not listed above was left behind, unread`,
    });
  }
}

const stopReasons: Record<string, string> = {
  entries: `the listing stopped at the cap of ${outputWalkCaps.maxEntries} entries`,
  folders: `the walk stopped at the cap of ${outputWalkCaps.maxFolders} folders`,
  time: `the walk stopped at its time budget of ${outputWalkCaps.budgetSeconds} s`,
  deadline: "the collection did not finish in time and was stopped",
  overflow: "the collection sent more than the limits allow and was stopped",
  malformed: "the collection's output was malformed and was not read further",
  unfinished: "the collection did not finish",
};

function mediaTypeOf(name: string): string {
  return lookup(name) || "application/octet-stream";
}
