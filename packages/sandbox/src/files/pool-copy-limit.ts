// When a session's data files skip the warm pool (`poolCopyLimit`): a warm container exists before
// the request and cannot gain a mount, so it takes its files by copy, which costs time, the host's
// reading and, in /workspace/data, the container's memory and `diskLimit`. Past the limit a
// container of the session's own, started with the files mounted, is the better start.
import { lstat } from "node:fs/promises";
import { sizeInBytes } from "../config.ts";

/**
 * The bytes of those of `paths` the mount check would likely pass: regular files that others may
 * read. A link, a folder, a private file or a missing path counts 0: it is refused a mount, so it
 * would be copied whichever container it went to (mount-files.ts makes the real check).
 */
export async function mountableBytes(paths: readonly string[]): Promise<number> {
  const sizes = await Promise.all(
    paths.map((path) =>
      lstat(path).then(
        (info) => (info.isFile() && (info.mode & 0o004) !== 0 ? info.size : 0),
        () => 0,
      ),
    ),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}

/**
 * Whether files that could be mounted (`mountFiles`, on an engine that mounts) go to a container of
 * their own rather than a warm pool's: when the mountable ones add up to more than `poolCopyLimit`.
 */
export async function overPoolCopyLimit(
  files: readonly string[],
  poolCopyLimit: string | number,
): Promise<{ over: boolean; bytes: number }> {
  const bytes = await mountableBytes(files);
  return { over: bytes > sizeInBytes(poolCopyLimit), bytes };
}
