import { relative } from "node:path";
import { cliAssets } from "./cli-assets.ts";

/** The recording shipped inside the package (replays/first-run.json): one program, no data, no key. */
export function firstRunReplay(): string {
  return cliAssets.path("replays/first-run.json");
}

/** The question that recording answers. */
export const firstRunQuestion = "What is the sum of the squares of 1 to 10?";

/** The shipped recording's path as a user types it: relative to `cwd` when it is inside it. */
export function firstRunReplayPath(cwd: string): string {
  const replay = firstRunReplay();
  const path = relative(cwd, replay);
  return path.startsWith("..") || path === "" ? replay : path;
}
