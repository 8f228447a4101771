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
