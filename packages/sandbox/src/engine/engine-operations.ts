import type { ContainerEngine, EngineContainer } from "./container-engine.ts";

/** The HTTP status of a failed Engine API call (dockerode puts it on the error), if any. */
export function statusCodeOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** Removes a container; 404 (gone) and 409 (removal already in progress) count as done. */
export async function removeContainer(container: EngineContainer): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await container.remove({ force: true, v: true });
      return;
    } catch (error) {
      const status = statusCodeOf(error);
      if (status === 404 || status === 409) return;
      // Podman refuses a forced removal of a container that stops while it sends SIGKILL
      // ("container state improper"); once stopped, the next removal takes.
      if (attempt >= 5 || !/state improper/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

/** Destroys a Docker connection (an exec's or an attach's hijacked socket); nothing when there is none. */
export function destroyStream(stream: NodeJS.ReadableStream | NodeJS.WritableStream | undefined): void {
  (stream as { destroy?: () => void } | undefined)?.destroy?.();
}

/**
 * The one container teardown: closes the kill helper (when it started), the warm process (process/warm-process.ts) and
 * the lifeline (when it was attached), then removes the container. Removal errors other than 404/409 are thrown.
 */
export async function teardownContainer(parts: {
  container: EngineContainer;
  helper?: { close(): void } | undefined;
  lifeline?: NodeJS.ReadWriteStream | undefined;
  /** The process it started with or kept warm (process/warm-process.ts): closed, claimed or not. */
  warm?: { close(): void } | undefined;
}): Promise<void> {
  parts.helper?.close();
  parts.warm?.close();
  destroyStream(parts.lifeline);
  await removeContainer(parts.container);
}

/** An Engine API error's message without dockerode's "(HTTP code 404) no such network - " prefix. */
export function describeDockerError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\(HTTP code \d+\) [a-z ]+- /, "").trim();
}

/** Removes a network; 404 counts as done. */
export async function removeNetwork(docker: ContainerEngine, networkId: string): Promise<void> {
  try {
    await docker.getNetwork(networkId).remove();
  } catch (error) {
    if (statusCodeOf(error) === 404) return;
    throw error;
  }
}
