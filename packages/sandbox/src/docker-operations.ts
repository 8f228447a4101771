import type Dockerode from "dockerode";

/** The HTTP status of a failed Engine API call (dockerode puts it on the error), if any. */
export function statusCodeOf(error: unknown): number | undefined {
  const status = (error as { statusCode?: unknown } | null | undefined)?.statusCode;
  return typeof status === "number" ? status : undefined;
}

/** Removes a container; 404 (gone) and 409 (removal already in progress) count as done. */
export async function removeContainer(container: Dockerode.Container): Promise<void> {
  try {
    await container.remove({ force: true, v: true });
  } catch (error) {
    const status = statusCodeOf(error);
    if (status === 404 || status === 409) return;
    throw error;
  }
}

/** Destroys a Docker connection (an exec's or an attach's hijacked socket); nothing when there is none. */
export function destroyStream(stream: NodeJS.ReadableStream | NodeJS.WritableStream | undefined): void {
  (stream as { destroy?: () => void } | undefined)?.destroy?.();
}

/**
 * The one container teardown: closes the kill helper (when it started) and the lifeline (when it was
 * attached), then removes the container. Removal errors other than 404/409 are thrown.
 */
export async function teardownContainer(parts: {
  container: Dockerode.Container;
  helper?: { close(): void } | undefined;
  lifeline?: NodeJS.ReadWriteStream | undefined;
}): Promise<void> {
  parts.helper?.close();
  destroyStream(parts.lifeline);
  await removeContainer(parts.container);
}
