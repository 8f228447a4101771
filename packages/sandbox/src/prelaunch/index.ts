// @codeaction/sandbox/prelaunch: start a sandbox container in a worker thread before the heavy
// modules load. Loads nothing but Node's own modules.

export type { PlacedFile, PlacingProgress } from "../files/place-files.ts";
export { placedFilePath } from "../files/placement-path.ts";
export { type PrelaunchedContainer, SandboxPrelaunch } from "./prelaunch.ts";
export { workerEnvironment } from "./worker-env.ts";
