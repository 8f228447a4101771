import type { SandboxSession } from "@codeaction/sandbox";
import { lookup } from "mime-types";

/** Where a program saves files that should come back with its answer. */
export const outputDirectory = "/workspace/out";

/** A file a program saved under /workspace/out, brought back to the host. */
export type OutputFile = {
  /** The path under /workspace/out, sanitised: folders joined with "/", each part [A-Za-z0-9._-]. */
  name: string;
  size: number;
  /** From the name's extension; application/octet-stream when unknown. */
  mediaType: string;
  bytes: Uint8Array;
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

/** Folders deeper than this under /workspace/out are refused, not walked. */
const maxDepth = 4;
/** Refusals kept per run; one more entry counts the rest. */
const maxRefusals = 50;
const maxNameCharacters = 100;

/**
 * Brings back what the program saved under /workspace/out, after it has ended (no process of it
 * is left to swap files). Regular files only: links, FIFOs, devices and sockets are refused and
 * reported, never followed or opened; so is /workspace/out itself when it is a link. Sizes are
 * checked from the listing before anything is read, and every read is capped as well.
 */
export async function collectOutputFiles(
  session: Pick<SandboxSession, "listFiles" | "readFile">,
  limits: OutputFileLimits = defaultOutputFileLimits,
): Promise<CollectedFiles> {
  const collected: CollectedFiles = { files: [], refused: [] };
  const workspace = await session.listFiles("/workspace");
  const top = workspace.find((entry) => entry.name === "out");
  if (!top) return collected;
  if (top.type !== "directory") {
    refuse(
      collected,
      "out",
      `${outputDirectory} is a ${describeType(top.type)}, not a folder; it was not read`,
    );
    return collected;
  }
  const state = { totalBytes: 0, taken: new Set<string>() };
  await walk(session, outputDirectory, [], { limits, collected, state });
  return collected;
}

type WalkContext = {
  limits: OutputFileLimits;
  collected: CollectedFiles;
  state: { totalBytes: number; taken: Set<string> };
};

async function walk(
  session: Pick<SandboxSession, "listFiles" | "readFile">,
  directory: string,
  parts: string[],
  context: WalkContext,
): Promise<void> {
  const { limits, collected, state } = context;
  for (const entry of await session.listFiles(directory)) {
    const shown = [...parts, entry.name].join("/");
    if (entry.type === "directory") {
      if (parts.length + 1 >= maxDepth)
        refuse(collected, shown, `folders nest deeper than ${maxDepth} levels`);
      else await walk(session, entry.path, [...parts, entry.name], context);
      continue;
    }
    if (entry.type !== "file") {
      refuse(collected, shown, `it is a ${describeType(entry.type)}; only regular files come back`);
      continue;
    }
    if (collected.files.length >= limits.maxFiles) {
      refuse(collected, shown, `over the limit of ${limits.maxFiles} files (outputFiles.maxFiles)`);
      continue;
    }
    if (entry.size > limits.maxFileBytes) {
      refuse(
        collected,
        shown,
        `${entry.size} bytes, over the limit of ${limits.maxFileBytes} per file (outputFiles.maxFileBytes)`,
      );
      continue;
    }
    if (state.totalBytes + entry.size > limits.maxTotalBytes) {
      refuse(
        collected,
        shown,
        `the files would total over ${limits.maxTotalBytes} bytes (outputFiles.maxTotalBytes)`,
      );
      continue;
    }
    const { content, truncated } = await session.readFile(entry.path, { maxBytes: limits.maxFileBytes });
    if (truncated) {
      refuse(collected, shown, `it grew past ${limits.maxFileBytes} bytes while being read`);
      continue;
    }
    state.totalBytes += content.length;
    const name = uniqueName(sanitiseName([...parts, entry.name]), state.taken);
    collected.files.push({
      name,
      size: content.length,
      mediaType: mediaTypeOf(name),
      bytes: new Uint8Array(content),
    });
  }
}

function refuse(collected: CollectedFiles, name: string, reason: string): void {
  if (collected.refused.length < maxRefusals) {
    collected.refused.push({ name: sanitiseName(name.split("/")), reason });
  } else if (collected.refused.length === maxRefusals) {
    collected.refused.push({
      name: "...",
      reason: "more entries were refused; only the first ones are listed",
    });
  }
}

function describeType(type: string): string {
  return type === "symlink" ? "link" : type === "other" ? "FIFO, device or socket" : type;
}

/** Each part: characters outside [A-Za-z0-9._-] become "_", no leading dot, at most 100 characters. */
export function sanitiseName(parts: string[]): string {
  return parts
    .map((part) => {
      const clean = part
        .normalize("NFKC")
        .replace(/[^A-Za-z0-9._-]/g, "_")
        .replace(/^\.+/, "_")
        .slice(0, maxNameCharacters);
      return clean === "" ? "_" : clean;
    })
    .join("/");
}

function uniqueName(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let index = 2; taken.has(candidate); index += 1) {
    const dot = name.lastIndexOf(".");
    candidate = dot > 0 ? `${name.slice(0, dot)}-${index}${name.slice(dot)}` : `${name}-${index}`;
  }
  taken.add(candidate);
  return candidate;
}

function mediaTypeOf(name: string): string {
  return lookup(name) || "application/octet-stream";
}
