// Host files bind-mounted read-only at their /workspace/data path instead of copied (issue 46): the
// check before the mount, and the check inside the started container that what is mounted is what
// was checked. Copying (place-files.ts) stays the way for remote engines, Podman, warm containers,
// files given later, and every file this check refuses.
import { constants } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import { resolve } from "node:path";
import type { EngineContainer } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { FilePlacementError } from "../errors/file-placement-error.ts";
import { startExec, waitForExecExit } from "../process/exec.ts";
import { captureOutput } from "../process/exec-connection.ts";
import { type FileToPlace, placedFilesDirectory } from "./placement-path.ts";

/** What identifies a host file: its device and inode, its size and its two times (nanoseconds). */
export type FileIdentity = { dev: bigint; ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint };

/** A host file checked for a mount: the path the engine mounts (`source`, no link in it) and what it was. */
export type CheckedMount = FileToPlace & {
  source: string;
  bytes: number;
  identity: FileIdentity;
  /** The descriptor held open from the check until the mount is verified (its inode stays taken). */
  handle: FileHandle;
};

/** A file that will be copied instead, and why. */
export type MountRefusal = FileToPlace & { reason: string };

function identityOf(info: {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}): FileIdentity {
  return { dev: info.dev, ino: info.ino, size: info.size, mtimeNs: info.mtimeNs, ctimeNs: info.ctimeNs };
}

/**
 * Checks one host file for a mount: the name given is not a link, its real path (the links of the
 * folders on the way resolved once, here) opens read-only without following a link, is a regular
 * file that others may read (the sandbox's user reads it as one of them), and still names what was
 * opened. The descriptor stays open (`handle`) until the mount is verified. A refusal is not an
 * error: the file is copied instead.
 */
export async function checkMountable(file: FileToPlace): Promise<CheckedMount | MountRefusal> {
  const refuse = (reason: string): MountRefusal => ({ ...file, reason });
  let handle: FileHandle | undefined;
  try {
    const named = resolve(file.hostPath);
    if ((await lstat(named)).isSymbolicLink()) return refuse("it is a link");
    const source = await realpath(named);
    handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile()) throw new Error("it is not a regular file");
    // The container's user is not the file's owner: it reads the file as "others" do.
    if ((opened.mode & 0o004n) === 0n)
      throw new Error("others may not read it (the sandbox's user could not)");
    const there = await lstat(source, { bigint: true });
    if (there.dev !== opened.dev || there.ino !== opened.ino) throw new Error("it changed while checked");
    return { ...file, source, bytes: Number(opened.size), identity: identityOf(opened), handle };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    return refuse((error as NodeJS.ErrnoException).code ?? (error as Error).message);
  }
}

/** Checks each file; those refused are listed apart (to be copied). */
export async function checkMounts(
  files: readonly FileToPlace[],
): Promise<{ mounts: CheckedMount[]; refused: MountRefusal[] }> {
  const checked = await Promise.all(files.map(checkMountable));
  return {
    mounts: checked.filter((entry): entry is CheckedMount => "handle" in entry),
    refused: checked.filter((entry): entry is MountRefusal => !("handle" in entry)),
  };
}

/** Closes the descriptors of the checked files. */
export async function releaseMounts(mounts: readonly CheckedMount[]): Promise<void> {
  await Promise.all(mounts.map((mount) => mount.handle.close().catch(() => undefined)));
}

/** The folder's entries as find prints them: type, device, inode, size, both times, name. */
const listingCommand = [
  "find",
  placedFilesDirectory,
  "-mindepth",
  "1",
  "-maxdepth",
  "1",
  "-printf",
  "%y\\t%D\\t%i\\t%s\\t%T@\\t%C@\\t%f\\n",
];

/** find's `seconds.fraction` (10 digits) as nanoseconds. */
function nanoseconds(time: string): bigint {
  const [seconds = "0", fraction = ""] = time.split(".");
  return BigInt(seconds) * 1_000_000_000n + BigInt(fraction.padEnd(9, "0").slice(0, 9) || "0");
}

/**
 * What differs between the mounted files as the container sees them (find's listing of
 * /workspace/data) and the files checked on the host: size and both times always (a file's ctime
 * cannot be set back by its owner), device and inode where the runtime shows the host's (runc; gVisor
 * numbers its own). Empty means each mount is the file that was checked.
 */
export function findMountMismatches(
  listing: string,
  mounts: readonly CheckedMount[],
  options: { compareInode: boolean },
): string[] {
  const seen = new Map<string, string[]>();
  for (const line of listing.split("\n")) {
    const fields = line.split("\t");
    if (fields.length >= 7) seen.set(fields.slice(6).join("\t"), fields);
  }
  const problems: string[] = [];
  for (const mount of mounts) {
    const name = mount.containerPath.slice(placedFilesDirectory.length + 1);
    const [type, dev, ino, size, mtime, ctime] = seen.get(name) ?? [];
    const { identity } = mount;
    const same =
      type === "f" &&
      BigInt(size ?? -1) === identity.size &&
      nanoseconds(mtime ?? "") === identity.mtimeNs &&
      nanoseconds(ctime ?? "") === identity.ctimeNs &&
      (!options.compareInode || (BigInt(dev ?? -1) === identity.dev && BigInt(ino ?? -1) === identity.ino));
    if (!same) problems.push(`${mount.hostPath} at ${mount.containerPath} is not the file that was checked`);
  }
  return problems;
}

/**
 * Reads /workspace/data in the started container (one exec) and throws a FilePlacementError when a
 * mount is not the file checked on the host (a link swapped in between the check and the mount), or
 * when the host path no longer names the checked file. Runs before any program.
 */
export async function verifyMounts(
  container: EngineContainer,
  mounts: readonly CheckedMount[],
  options: { guard: boolean; compareInode: boolean },
): Promise<void> {
  if (mounts.length === 0) return;
  const { exec, stream } = await startExec(container, {
    argv: listingCommand,
    cwd: "/",
    stdin: false,
    guard: options.guard,
  });
  const output = captureOutput(stream, { stdout: 1024 * 1024, stderr: 4096 });
  await output.ended;
  destroyStream(stream);
  const exitCode = await waitForExecExit(exec);
  const listing = output.stdout.contents().toString("utf8");
  const problems = exitCode === 0 ? findMountMismatches(listing, mounts, options) : [];
  for (const mount of mounts) {
    const now = await lstat(mount.source, { bigint: true }).catch(() => undefined);
    if (!now || now.dev !== mount.identity.dev || now.ino !== mount.identity.ino)
      problems.push(`${mount.hostPath} was replaced on the host after its check`);
  }
  // An image whose find cannot list (busybox's has no -printf): the mounts cannot be verified.
  const unverified = exitCode !== 0 && problems.length === 0;
  if (unverified) problems.push(`the listing of ${placedFilesDirectory} failed (exit ${exitCode})`);
  if (problems.length === 0) return;
  const first = mounts[0]!;
  const error = new FilePlacementError({
    hostPath: first.hostPath,
    containerPath: first.containerPath,
    bytes: first.bytes,
    reason: `the mount was refused: ${problems.join("; ")}`,
  });
  throw unverified ? Object.assign(error, { [unverifiable]: true }) : error;
}

const unverifiable = Symbol("codeaction.sandbox.mount-unverifiable");

/** Whether verifyMounts failed only because the container could not list the mounts (the files can be copied instead). */
export function mountsUnverifiable(error: unknown): boolean {
  return typeof error === "object" && error !== null && unverifiable in error;
}
