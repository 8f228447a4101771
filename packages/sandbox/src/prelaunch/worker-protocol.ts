// The messages between a SandboxPrelaunch (prelaunch.ts) and its worker thread (prelaunch-worker.ts).
import type { SandboxConfigInput } from "../config.ts";
import type { EngineDialect } from "../container/engine-dialect.ts";
import type { MountedFile, MountRefusalNote } from "../container/launch.ts";
import type { PlacedFile, PlacingProgress } from "../files/place-files.ts";
import type { FileToPlace } from "../files/placement-path.ts";

/** What the worker says (prelaunch-worker.ts). */
export type WorkerReport =
  /** The engine answered, its dialect is known and the runtime the settings ask for is registered. */
  | { type: "checked"; dialect: EngineDialect }
  | ({ type: "placing" } & PlacingProgress)
  /** The container has started; its read-back is still to come (the manager may start its warm command). */
  | { type: "started"; containerId: string }
  /** The container is ready to be taken over, with the files mounted at its start; the rest are copied after this (`placed`). */
  | {
      type: "launched";
      containerId: string;
      user: string;
      mounted: MountedFile[];
      mountRefusals: MountRefusalNote[];
    }
  /** The files placed (all of them, or those before `failure`). */
  | { type: "placed"; placed: PlacedFile[]; failure?: string }
  | { type: "failed"; message: string }
  | { type: "lifeline-ended" }
  | { type: "discarded" };

/** What the worker is told. */
export type WorkerOrder = { type: "release" } | { type: "discard" };

/** What the worker is started with. */
export type WorkerInput = {
  config: SandboxConfigInput;
  managerId: string;
  deadlineSeconds: number;
  files: FileToPlace[];
};
