// @codeaction/sandbox/prelaunch: start a sandbox container in a worker thread before the heavy
// modules load. Loads nothing but Node's own modules.
export { placedFilePath } from "../placed-file-path.ts";
export type { PlacedFile, PlacingProgress } from "../placed-files.ts";
export { type PrelaunchedContainer, SandboxPrelaunch } from "./prelaunch.ts";
export { workerEnvironment } from "./worker-env.ts";
