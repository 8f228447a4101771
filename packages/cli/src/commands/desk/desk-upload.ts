import { constants } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, unlink } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { extname, join } from "node:path";
import { formatFromPath, supportedExtensions } from "../../data-files/data-formats.ts";
import { describeError } from "./desk-errors.ts";
import type { DeskSession } from "./desk-session.ts";

/** The largest data file the page may upload. */
export const maxUploadBytes = 20 * 1024 * 1024;
/** The most files the upload folder holds. */
export const maxUploadFiles = 50;
/** The longest name an uploaded file keeps. */
const maxNameCharacters = 120;

/** What the server answers: a status and a JSON body (`error` and, where the user can act, `fix`). */
export type UploadAnswer = { status: number; body: { error?: string; fix?: string; name?: string } };

const limitText = `${maxUploadBytes / 1024 / 1024} MiB`;

/**
 * POST /api/upload?name=<file name>: the body is the file. It goes into the desk's own upload folder
 * under a plain name (no folder part, no leading dot, only letters, digits, space, dot, dash and
 * underscore), created new (O_EXCL) and never through a link (O_NOFOLLOW), at most
 * `maxUploadBytes` (counted as it arrives: the declared length is not trusted). The agent is then
 * built again over the data files with this one; a file it cannot read is removed again.
 */
export async function receiveUpload(
  request: IncomingMessage,
  session: DeskSession,
  givenName: string | null,
): Promise<UploadAnswer> {
  const name = uploadName(givenName ?? "");
  if ("error" in name) return { status: 400, body: name };
  const declared = Number(request.headers["content-length"] ?? 0);
  if (declared > maxUploadBytes) return overLimit(name.name);
  if (session.busy)
    return { status: 409, body: { error: "a question or an upload is running; wait for it" } };
  session.busy = true;
  try {
    const folder = await uploadFolder(session.uploadFolder);
    if ("error" in folder) return { status: 500, body: folder };
    const existing = await readdir(session.uploadFolder);
    if (existing.length >= maxUploadFiles) {
      return {
        status: 409,
        body: {
          error: `the upload folder holds ${existing.length} files, the most it takes`,
          fix: `remove files from ${session.uploadFolder}, then restart the desk`,
        },
      };
    }
    const { path, handle } = await createFree(session.uploadFolder, name.name, existing);
    const written = await writeBody(request, handle)
      .catch(async (error: unknown) => {
        await unlink(path).catch(() => undefined);
        throw error;
      })
      .finally(() => handle.close());
    if (!written) {
      await unlink(path).catch(() => undefined);
      return overLimit(name.name);
    }
    return await addFile(session, path);
  } finally {
    session.busy = false;
  }
}

/** The plain name a file is kept under, or why the given one is refused. */
export function uploadName(given: string): { name: string } | { error: string; fix?: string } {
  const last = given.split(/[\\/]/).at(-1) ?? "";
  const name = last
    .normalize("NFC")
    .replace(/[^\p{L}\p{N} ._-]/gu, "_")
    .replace(/^[.\s]+/, "")
    .trim();
  if (name === "" || name === extname(name)) {
    return {
      error: "the file has no name",
      fix: "give the file a name with its extension, such as orders.csv",
    };
  }
  const extension = extname(name).toLowerCase();
  if (!supportedExtensions.includes(extension)) {
    return {
      error: `${name}: ${extension ? `"${extension}" is not a data format the desk reads` : "a file without an extension"}`,
      fix: `the desk takes ${supportedExtensions.join(" ")} (as --file does)${extension === ".xls" ? "; save an old Excel file as .xlsx" : ""}`,
    };
  }
  const stem = name.slice(0, -extension.length).slice(0, maxNameCharacters - extension.length);
  return { name: `${stem}${extension}` };
}

function overLimit(name: string): UploadAnswer {
  return {
    status: 413,
    body: {
      error: `${name} is over the desk's upload limit of ${limitText}`,
      fix: `give a larger file on the command line instead: codeaction desk --file FILE`,
    },
  };
}

/** The upload folder made (0700), and a real folder, not a link to one. */
async function uploadFolder(path: string): Promise<{ path: string } | { error: string }> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const status = await lstat(path);
  if (!status.isDirectory()) return { error: `the upload folder ${path} is not a folder (a link?)` };
  return { path };
}

/**
 * Creates `name`, or `name-2.ext`, `name-3.ext`...: the first that is free. The open itself is the
 * check (O_CREAT | O_EXCL: a name that exists, a link included, is EEXIST; O_NOFOLLOW: never
 * through a link), so a file or link that appears after the listing is never written over. A
 * listed name that differs only in case is skipped too (two files' tools would share a name).
 */
async function createFree(
  folder: string,
  name: string,
  listed: string[],
): Promise<{ path: string; handle: FileHandle }> {
  const otherCase = (candidate: string) =>
    listed.some((item) => item !== candidate && item.toLowerCase() === candidate.toLowerCase());
  const extension = extname(name);
  const stem = name.slice(0, name.length - extension.length);
  for (let index = 1; index <= maxUploadFiles + 1; index += 1) {
    const candidate = index === 1 ? name : `${stem}-${index}${extension}`;
    if (otherCase(candidate)) continue;
    const path = join(folder, candidate);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const handle = await open(path, flags, 0o600).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EEXIST") return undefined;
      throw error;
    });
    if (handle) return { path, handle };
  }
  throw new Error(
    `${name}: no free name in ${folder} (tried ${maxUploadFiles + 1}); remove files there, then restart the desk`,
  );
}

/**
 * Writes the body to `handle`; false once it passes `maxUploadBytes`: reading stops there, and the
 * socket stays open for the answer (which closes it).
 */
function writeBody(request: IncomingMessage, handle: FileHandle): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let size = 0;
    // The write under way: every outcome waits for it, so the handle is never closed under it.
    let writing: Promise<unknown> = Promise.resolve();
    let stopped = false;
    const stop = (outcome: boolean | Error) => {
      stopped = true;
      request.off("data", onData).off("end", onEnd).off("error", stop).off("aborted", onAborted);
      request.pause();
      writing.then(
        () => (outcome instanceof Error ? reject(outcome) : resolve(outcome)),
        (error: unknown) => reject(error),
      );
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxUploadBytes) return stop(false);
      request.pause();
      writing = handle.write(chunk).then(() => {
        if (!stopped) request.resume();
      });
      writing.catch((error: unknown) => stop(error instanceof Error ? error : new Error(String(error))));
    };
    const onEnd = () => stop(true);
    const onAborted = () => stop(new Error("the upload was cut off before its end"));
    request.on("data", onData).on("end", onEnd).on("error", stop).on("aborted", onAborted);
  });
}

/** Builds the agent again with the new file; a file it cannot read is removed and its error returned. */
async function addFile(session: DeskSession, path: string): Promise<UploadAnswer> {
  const files = [...session.files, { path, format: formatFromPath(path) }];
  let built: Awaited<ReturnType<DeskSession["buildAgent"]>>;
  try {
    built = await session.buildAgent(files);
  } catch (error) {
    await unlink(path).catch(() => undefined);
    const described = describeError(error);
    return {
      status: 400,
      body: { error: described.message, fix: described.fix ?? "fix the file, then drop it again" },
    };
  }
  const previous = session.built;
  session.built = built;
  session.files = files;
  await previous?.close();
  return { status: 200, body: { name: path.split("/").at(-1) ?? path } };
}
