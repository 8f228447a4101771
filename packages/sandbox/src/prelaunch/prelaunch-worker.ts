// The worker thread of a SandboxPrelaunch (prelaunch.ts): connects, checks the runtime and the image,
// starts one container with every flag read back, and holds its lifeline (the stdin attach) until
// the thread that took the container over releases it or the container ends.
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { parseSandboxConfig } from "../config.ts";
import { detectEngineDialect } from "../container/engine-dialect.ts";
import { buildLabels } from "../container/labels.ts";
import { launchForHandover, mountsWork } from "../container/launch.ts";
import { answeringDocker, inspectSandboxImage, requireRuntime } from "../container/readiness.ts";
import { allocateIdentity } from "../container/user-ids.ts";
import { destroyStream, removeContainer } from "../engine/engine-operations.ts";
import { type PlacedFile, placeFiles as streamFiles } from "../files/place-files.ts";
import type { WorkerInput, WorkerOrder, WorkerReport } from "./worker-protocol.ts";

function requirePort(): MessagePort {
  if (!parentPort) throw new Error("prelaunch-worker.ts runs as a worker thread (SandboxPrelaunch.start)");
  return parentPort;
}
const port = requirePort();
const input = workerData as WorkerInput;
const discard = new AbortController();
let launched: Awaited<ReturnType<typeof launchForHandover>> | undefined;

const report = (message: WorkerReport) => port.postMessage(message);

port.on("message", (order: WorkerOrder) => {
  if (order.type === "release") {
    destroyStream(launched?.lifeline);
    port.close();
  } else {
    discard.abort(new Error("the prelaunch was closed"));
    void discardContainer();
  }
});

/** Removes the container (the launch stops between its steps if it is still running) and ends. */
async function discardContainer(): Promise<void> {
  // A launch still running stops between its steps and removes its container itself.
  await launching.catch(() => undefined);
  if (launched) {
    destroyStream(launched.lifeline);
    await removeContainer(launched.container).catch(() => undefined);
  }
  report({ type: "discarded" });
  port.close();
}

async function launch(): Promise<void> {
  const config = parseSandboxConfig(input.config);
  if (config.network !== "none" && config.network !== "full") {
    throw new Error('a prelaunch needs network "none" or "full"; an allow-list starts its sandboxes itself');
  }
  const docker = await answeringDocker(undefined, config, undefined);
  // Podman takes some settings its own way (or refuses them): the same dialect the manager uses.
  const dialect = await detectEngineDialect(docker, config);
  await requireRuntime(docker, config, { allowList: false });
  report({ type: "checked", dialect });
  const image = await inspectSandboxImage(docker, config.image);
  const identity = allocateIdentity(config);
  const deadline = new Date(Date.now() + input.deadlineSeconds * 1000);
  launched = await launchForHandover(docker, identity.config, {
    labels: buildLabels({ managerId: input.managerId, deadline }),
    deadline,
    imageEnv: image.Config?.Env ?? [],
    dialect,
    signal: discard.signal,
    onStarted: (containerId) => report({ type: "started", containerId }),
    // On a local engine the files that pass the mount check are bind-mounted at the start; the rest stream in.
    ...(mountsWork(docker, dialect) && input.files.length > 0 ? { mountFiles: input.files } : {}),
  });
  const lifeline = launched.lifeline;
  const ended = () => {
    report({ type: "lifeline-ended" });
    port.close();
  };
  lifeline.on("end", ended);
  lifeline.on("close", ended);
  // Handed over now: the manager's read-back, kill helper and warm command start while the files
  // stream in (the session waits for them before a program runs).
  report({
    type: "launched",
    containerId: launched.containerId,
    user: identity.config.user ?? "",
    mounted: launched.mounted ?? [],
    mountRefusals: launched.mountRefusals ?? [],
  });
  report(await placeFiles(launched));
}

/**
 * The files the prelaunch was given, placed read-only. A failure (a full /workspace) is reported
 * with the files placed before it; the container stays the session's, whose turn copies what is
 * missing and reports the disk limit itself.
 */
async function placeFiles(container: NonNullable<typeof launched>): Promise<WorkerReport> {
  const mounted = container.mounted ?? [];
  const placed: PlacedFile[] = mounted.map(({ containerPath, bytes, how }) => ({
    containerPath,
    bytes,
    how,
  }));
  const toCopy = input.files.filter((file) => !mounted.some((mount) => mount.hostPath === file.hostPath));
  try {
    await streamFiles({ container: container.container, guard: container.guardExecs }, toCopy, {
      onProgress: (progress) => report({ type: "placing", ...progress }),
      onPlaced: (file) => placed.push(file),
    });
    return { type: "placed", placed };
  } catch (error) {
    return { type: "placed", placed, failure: error instanceof Error ? error.message : String(error) };
  }
}

const launching = launch();
launching.catch((error: unknown) => {
  if (discard.signal.aborted) return;
  report({ type: "failed", message: error instanceof Error ? error.message : String(error) });
  port.close();
});
