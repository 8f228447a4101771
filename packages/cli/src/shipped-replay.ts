import { relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The recording shipped inside the package (replays/first-run.json): one program, no data, no key. */
export const firstRunReplay = fileURLToPath(new URL("../replays/first-run.json", import.meta.url));

/** The question that recording answers. */
export const firstRunQuestion = "What is the sum of the squares of 1 to 10?";

/** The shipped recording's path as a user types it: relative to `cwd` when it is inside it. */
export function firstRunReplayPath(cwd: string): string {
  const path = relative(cwd, firstRunReplay);
  return path.startsWith("..") || path === "" ? firstRunReplay : path;
}
