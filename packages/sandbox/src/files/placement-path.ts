// The one mapping from a host file to its path inside a sandbox container. Loads nothing but
// Node's own modules: the prelaunch entry point and the CLI use it before the heavy modules load.
import { basename } from "node:path";

/** A host file to place in the container: where it comes from and its path inside (`placedFilePath`). */
export type FileToPlace = { hostPath: string; containerPath: string };

/** Where placed host files appear inside a container, read-only. */
export const placedFilesDirectory = "/workspace/data";

const maxNameCharacters = 100;

/**
 * The name a host file gets inside the container: its base name with characters outside
 * [A-Za-z0-9._-] turned into "_", no leading dot, at most 100 characters.
 */
export function placedFileName(hostPath: string): string {
  const clean = basename(hostPath)
    .normalize("NFKC")
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, maxNameCharacters);
  return clean === "" ? "_" : clean;
}

/** Where the host file at `hostPath` appears inside the container: /workspace/data/<placedFileName>. */
export function placedFilePath(hostPath: string): string {
  return `${placedFilesDirectory}/${placedFileName(hostPath)}`;
}

/** Each host path with its place inside the container. */
export function filesToPlace(hostPaths: readonly string[]): FileToPlace[] {
  return hostPaths.map((hostPath) => ({ hostPath, containerPath: placedFilePath(hostPath) }));
}
