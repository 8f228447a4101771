import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../durable/canonical-json.ts";
import { privateFolder, writePrivateFile } from "../private-file.ts";

/**
 * Where threads' histories are kept between processes (`buildAgent({ threadStore })`): text by
 * thread id. The agent signs what it writes and checks what it reads (thread-records.ts); a store
 * only keeps bytes.
 */
export type ThreadStore = {
  read(threadId: string): Promise<string | undefined>;
  write(threadId: string, text: string): Promise<void>;
  remove(threadId: string): Promise<void>;
};

/** The largest thread record read or written (a longer history is not stored: it starts afresh). */
export const maxThreadRecordBytes = 64 * 1024 * 1024;

const folderHint = "give createFileThreadStore a folder of your own";

/**
 * A thread store in a folder (made 0700): one file per thread, named by the SHA-256 of its id,
 * written 0600 to a fresh temporary name and renamed (a crash leaves the old history whole), read
 * without following links and never past 64 MiB.
 */
export function createFileThreadStore(directory: string): ThreadStore {
  const pathOf = (threadId: string) => join(directory, `${sha256Hex(threadId).slice(0, 40)}.thread.json`);
  const ready = () => privateFolder(directory, folderHint);
  return {
    async read(threadId) {
      await ready();
      return readBounded(pathOf(threadId));
    },
    async write(threadId, text) {
      await ready();
      const temporary = join(directory, `.${randomBytes(8).toString("hex")}.tmp`);
      await writePrivateFile(temporary, text, { hint: folderHint, exclusive: true, sync: true });
      await rename(temporary, pathOf(threadId));
    },
    async remove(threadId) {
      await ready();
      await unlink(pathOf(threadId)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    },
  };
}

async function readBounded(path: string): Promise<string | undefined> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "ELOOP" || code === "EMLINK") return refusedRecord("the stored thread is a symbolic link");
    throw error;
  }
  try {
    const found = await file.stat();
    if (!found.isFile()) return refusedRecord("the stored thread is not a regular file");
    if (found.size > maxThreadRecordBytes) {
      return refusedRecord(`the stored thread is ${found.size} bytes, over ${maxThreadRecordBytes}`);
    }
    return await file.readFile("utf8");
  } finally {
    await file.close();
  }
}

/** What a read hands on for a file it will not read: the agent refuses it, naming why. */
function refusedRecord(why: string): string {
  return JSON.stringify({ refused: why });
}
