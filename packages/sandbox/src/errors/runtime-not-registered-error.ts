import { SandboxError } from "./sandbox-error.ts";

const marker = "codeaction.sandbox.runtime-not-registered-error";
const symbol = Symbol.for(marker);

/** The configured runtime (runsc for `backend: "gvisor"`) is not registered with the Docker engine. */
export class RuntimeNotRegisteredError extends SandboxError {
  protected readonly [symbol] = true;
  readonly runtime: string;
  readonly registeredRuntimes: string[];

  constructor(options: { runtime: string; registeredRuntimes: string[]; backend: string }) {
    super(
      `The sandbox needs the container runtime "${options.runtime}" (backend: "${options.backend}"), but the Docker engine does not have it registered. Registered runtimes: ${options.registeredRuntimes.join(", ") || "(none)"}. Install gVisor and register it ("runsc install" adds it to /etc/docker/daemon.json, then restart dockerd), or use backend: "docker".`,
      { code: "runtime-not-registered" },
    );
    this.name = "RuntimeNotRegisteredError";
    this.runtime = options.runtime;
    this.registeredRuntimes = options.registeredRuntimes;
  }

  static override isInstance(error: unknown): error is RuntimeNotRegisteredError {
    return SandboxError.hasMarker(error, marker);
  }
}
