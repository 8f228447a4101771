import { posix } from "node:path";
import { PathRefusedError } from "../errors/path-refused-error.ts";

/** The folders file operations may touch. */
export const allowedRoots = ["/workspace", "/tmp"] as const;

/** A shell line that exits 3, printing the path, unless "$real" is under an allowed root. */
export const refuseOutsideRootsLine = `case "$real" in ${allowedRoots
  .flatMap((root) => [root, `${root}/*`])
  .join("|")}) ;; *) echo "$real" >&2; exit 3 ;; esac`;

export function isInsideAllowedRoots(absolutePath: string): boolean {
  return allowedRoots.some((root) => absolutePath === root || absolutePath.startsWith(`${root}/`));
}

/**
 * Resolves a path the way the sandbox sees it (relative paths start at `workdir`) and refuses
 * anything outside /workspace and /tmp: `../etc/passwd`, `/workspace2`, NUL bytes, empty paths.
 * Symbolic links are checked again inside the container when a file is read.
 */
export function resolveSandboxPath(input: string, options: { workdir: string }): string {
  if (typeof input !== "string" || input.length === 0) {
    throw new PathRefusedError({ path: String(input), reason: "the path is empty" });
  }
  if (input.includes("\0"))
    throw new PathRefusedError({ path: input, reason: "the path contains a NUL byte" });
  if (/[\r\n]/.test(input))
    throw new PathRefusedError({ path: input, reason: "the path contains a line break" });
  const resolved = posix.resolve(options.workdir, input);
  if (!isInsideAllowedRoots(resolved)) {
    throw new PathRefusedError({
      path: input,
      reason: `it resolves to ${resolved}, outside /workspace and /tmp`,
    });
  }
  return resolved;
}
