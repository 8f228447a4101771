// The checks `SandboxManager.ready()` makes before any container starts: the engine answers, the
// runtime the settings ask for is registered (and is gVisor when gVisor was promised), and the image
// exists and declares no volumes.

import type { Logger } from "pino";
import type { SandboxConfig } from "../config.ts";
import { connectDocker } from "../connection/connect-docker.ts";
import type { ContainerEngine, ImageInspectInfo } from "../engine/container-engine.ts";
import { statusCodeOf } from "../engine/engine-operations.ts";
import { ImageMissingError } from "../errors/image-missing-error.ts";
import { NetworkSetupError } from "../errors/network-setup-error.ts";
import { RuntimeNotRegisteredError } from "../errors/runtime-not-registered-error.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { SecurityFlagError } from "../errors/security-flag-error.ts";
import { runtimeFor } from "./container-spec.ts";

/** Pings the client the caller passed, or connects to the engine the settings (or the environment) name. */
export async function answeringDocker(
  given: ContainerEngine | undefined,
  config: SandboxConfig,
  logger: Logger | undefined,
): Promise<ContainerEngine> {
  if (given) {
    await given.ping().catch((error: unknown) => {
      throw new SandboxError(`The Docker client passed to SandboxManager does not answer: ${String(error)}`, {
        code: "docker-unavailable",
        cause: error,
      });
    });
    return given;
  }
  const { docker, endpoint, reason } = await connectDocker(config.engine ? { engine: config.engine } : {});
  logger?.debug({ endpoint, reason }, "connected to Docker");
  return docker;
}

/** Fails when the runtime the settings need is not registered, is not runsc under backend "gvisor", or cannot network an allow-list. */
export async function requireRuntime(
  docker: ContainerEngine,
  config: SandboxConfig,
  options: { allowList: boolean },
): Promise<void> {
  const runtime = runtimeFor(config);
  if (!runtime) return;
  const info = (await docker.info()) as {
    Runtimes?: Record<string, { path?: string; runtimeArgs?: string[] } | undefined>;
  };
  const registered = Object.keys(info.Runtimes ?? {});
  if (!registered.includes(runtime)) {
    throw new RuntimeNotRegisteredError({ runtime, registeredRuntimes: registered, backend: config.backend });
  }
  const registration = info.Runtimes?.[runtime];
  // backend "gvisor" promises gVisor: a runtime override must still run runsc, never runc.
  const binary = registration?.path ?? "";
  if (config.backend === "gvisor" && !/runsc/.test(binary.split("/").pop() ?? "")) {
    throw new SandboxError(
      `backend: "gvisor" needs a gVisor runtime, but the runtime "${runtime}" runs "${binary || "(unknown)"}", not runsc: the sandbox would run without gVisor. Remove the runtime option to use "runsc", or name the runtime your gVisor is registered as.`,
      { code: "runtime-not-gvisor" },
    );
  }
  // gVisor registered with its own networking off gives the sandbox no interface at all: an
  // allow-list could never reach its proxy. Say so now rather than fail every request later.
  const runtimeArgs = registration?.runtimeArgs ?? [];
  if (options.allowList && config.backend === "gvisor" && runtimeArgs.includes("--network=none")) {
    throw new NetworkSetupError({
      step: "runtime",
      reason: `the gVisor runtime "${runtime}" is registered with --network=none, so a sandbox under it has no network interface and cannot reach its egress proxy`,
      fix: 'Use backend: "docker" for an allow-list, or register runsc without --network=none where your gVisor supports it.',
    });
  }
}

/** The sandbox image's inspect: ImageMissingError when it is not there, SecurityFlagError when it declares a VOLUME. */
export async function inspectSandboxImage(docker: ContainerEngine, image: string): Promise<ImageInspectInfo> {
  let inspected: ImageInspectInfo;
  try {
    inspected = await docker.getImage(image).inspect();
  } catch (error) {
    if (statusCodeOf(error) === 404) throw new ImageMissingError({ image, cause: error });
    throw error;
  }
  const volumes = Object.keys(inspected.Config?.Volumes ?? {});
  if (volumes.length > 0) {
    throw new SecurityFlagError({
      problems: [
        `the image ${image} declares VOLUME ${volumes.join(", ")}: Docker would mount writable host-backed volumes there`,
      ],
    });
  }
  return inspected;
}
