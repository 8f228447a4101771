import { createHash, timingSafeEqual } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { canonicalJson, hmacHex, sha256Hex } from "../durable/canonical-json.ts";
import type { HistoryEntry } from "../durable/history.ts";
import { ThreadError } from "../errors/thread-error.ts";
import type { DataFile } from "../program/data-files.ts";
import { buildStubs } from "../prompt/python-stubs.ts";
import type { ToolSpec } from "../tools/tool-spec.ts";
import { maxThreadRecordBytes, type ThreadStore } from "./file-thread-store.ts";
import { StepSpace } from "./step-space.ts";

/** A thread's history as stored: signed (HMAC-SHA256 of its canonical JSON) with the agent's resumeSecret. */
export type ThreadRecord = {
  format: "codeaction.thread";
  /** 2 since tools are kept one by one; a record of version 1 starts its thread afresh. */
  version: 1 | 2;
  threadId: string;
  seed: string;
  summary: string;
  history: HistoryEntry[];
  /** The tools the programs were written against: each one's name and the digest of its stub. */
  tools: ToolDigest[];
  /** The data files the programs read, by name and content digest. */
  dataFiles: Array<{ name: string; sha256: string }>;
  signature: string;
};

/** One tool as a stored history knows it: its function's name and the SHA-256 of its stub's source. */
export type ToolDigest = { name: string; sha256: string };

/** The digests of the stubs the programs of an agent with `tools` are written against. */
export function toolDigestsOf(tools: ToolSpec[]): ToolDigest[] {
  return buildStubs(tools).map((stub) => ({ name: stub.functionName, sha256: sha256Hex(stub.source) }));
}

/** What the thread registry asks of storage: spaces in and out, the signing and checks done here. */
export type ThreadStoreAccess = {
  load(threadId: string): Promise<StepSpace | undefined>;
  save(threadId: string, space: StepSpace): Promise<void>;
  delete(threadId: string): Promise<void>;
};

/**
 * The registry's access to a ThreadStore: every history signed with `secret` when written, and
 * checked (signature, id, shape) when read, before anything runs: a changed byte is a ThreadError.
 * A history written against tools or data files that changed or are gone since is not re-executed:
 * the thread starts afresh and the model is told why. Tools and files added since do not matter
 * (the desk's upload adds both).
 */
export function threadStoreAccess(
  store: ThreadStore,
  options: { secret: string | Uint8Array; tools: readonly ToolDigest[]; dataFiles: readonly DataFile[] },
): ThreadStoreAccess {
  const digests = new DataDigests();
  // Taken now, off the first question's path: its answer waits for the history's save, which names them.
  void digests.of(options.dataFiles);
  return {
    async load(threadId) {
      const text = await store.read(threadId);
      if (text === undefined) return undefined;
      const record = verifyRecord(text, threadId, options.secret);
      const space = new StepSpace();
      space.seed = record.seed;
      space.summary = record.summary;
      const now = await digests.of(options.dataFiles);
      const tool = record.version === 2 ? firstDifference(record.tools, options.tools) : undefined;
      const file = firstDifference(record.dataFiles, now);
      if (record.version !== 2) {
        space.lost = "its history was stored by an earlier version of codeaction";
      } else if (tool) {
        space.lost = `the tool ${tool.name} ${tool.how} since its programs ran`;
      } else if (file) {
        space.lost = `the data file ${file.name} ${file.how} since its programs ran`;
      } else {
        space.history.push(...record.history);
      }
      return space;
    },
    async save(threadId, space) {
      const content: Omit<ThreadRecord, "signature"> = {
        format: "codeaction.thread",
        version: 2,
        threadId,
        seed: space.seed ?? "",
        summary: space.summary,
        history: space.history,
        tools: [...options.tools],
        dataFiles: await digests.of(options.dataFiles),
      };
      const text = JSON.stringify({ ...content, signature: hmacHex(options.secret, canonicalJson(content)) });
      if (Buffer.byteLength(text) > maxThreadRecordBytes) {
        // Too long to keep: stored empty, so the next process says so instead of restoring part.
        const emptied = { ...content, history: [], summary: "" };
        await store.write(
          threadId,
          JSON.stringify({ ...emptied, signature: hmacHex(options.secret, canonicalJson(emptied)) }),
        );
        return;
      }
      await store.write(threadId, text);
    },
    delete: (threadId) => store.remove(threadId),
  };
}

/** A stored record checked before anything runs: its shape, its thread, its signature. */
function verifyRecord(text: string, threadId: string, secret: string | Uint8Array): ThreadRecord {
  const refuse = (why: string, cause?: unknown): never => {
    throw new ThreadError({
      reason: "history-refused",
      threadId,
      message: `thread ${JSON.stringify(threadId)}: its stored history was refused (${why}); nothing was run. Drop the thread (agent.dropThread) to start it afresh, or check who writes the thread store.`,
      ...(cause === undefined ? {} : { cause }),
    });
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return refuse("it is not JSON", error);
  }
  const record = value as Partial<ThreadRecord> & { refused?: string };
  if (typeof record.refused === "string") return refuse(record.refused);
  if (record.format !== "codeaction.thread" || (record.version !== 1 && record.version !== 2))
    return refuse("it is not a codeaction thread record");
  if (typeof record.signature !== "string" || !/^[0-9a-f]{64}$/.test(record.signature))
    return refuse("it carries no signature");
  const { signature, ...content } = record as ThreadRecord;
  const expected = Buffer.from(hmacHex(secret, canonicalJson(content)), "hex");
  if (!timingSafeEqual(Buffer.from(signature, "hex"), expected)) {
    return refuse(
      "its signature does not match its content under this agent's resumeSecret: it was changed, or signed with another key",
    );
  }
  if (record.threadId !== threadId)
    return refuse(`it is the history of thread ${JSON.stringify(record.threadId)}`);
  if (
    !Array.isArray(record.history) ||
    !Array.isArray(record.dataFiles) ||
    (record.version === 2 && !Array.isArray(record.tools))
  )
    return refuse("its history is malformed");
  return record as ThreadRecord;
}

/** Data files' SHA-256, computed once per content (by path, size and modification time). */
/**
 * The first of `then` (name and digest) that `now` lacks or holds with another digest: what the
 * earlier programs used that is no longer as it was. What `now` adds does not count.
 */
function firstDifference(
  then: readonly { name: string; sha256: string }[],
  now: readonly { name: string; sha256: string }[],
): { name: string; how: "changed" | "is gone" } | undefined {
  for (const { name, sha256 } of then) {
    const current = now.find((other) => other.name === name)?.sha256;
    if (current !== sha256) return { name, how: current === undefined ? "is gone" : "changed" };
  }
  return undefined;
}

class DataDigests {
  /** Each file's digest by the key of the content it was taken of; in flight ones shared. */
  readonly #known = new Map<string, { key: string; sha256: Promise<string> }>();

  async of(files: readonly DataFile[]): Promise<Array<{ name: string; sha256: string }>> {
    const digests: Array<{ name: string; sha256: string }> = [];
    for (const file of files) {
      const info = await stat(file.path).catch(() => undefined);
      const key = info ? `${info.size}:${info.mtimeMs}:${info.ino}` : "missing";
      let known = this.#known.get(file.path);
      if (known?.key !== key) {
        known = { key, sha256: info ? digestOf(file.path) : Promise.resolve("missing") };
        this.#known.set(file.path, known);
      }
      digests.push({ name: file.name, sha256: await known.sha256 });
    }
    return digests;
  }
}

function digestOf(path: string): Promise<string> {
  return new Promise((resolve) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("end", () => resolve(hash.digest("hex")))
      .on("error", () => resolve("unreadable"));
  });
}
