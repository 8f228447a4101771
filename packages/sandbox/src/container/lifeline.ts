import type { EngineContainer } from "../engine/container-engine.ts";

/**
 * The stdio part of a container spec that takes a lifeline: stdin open and attachable once, nothing
 * else attached (output is read through exec and logs, never through the attach).
 */
export const lifelineStdio = {
  Tty: false,
  OpenStdin: true,
  StdinOnce: true,
  AttachStdin: true,
  AttachStdout: false,
  AttachStderr: false,
} as const;

/**
 * Attaches to a created container's stdin and keeps the connection open: the container's PID 1 (the
 * sandbox's init, init.ts; the proxy's `timeout ... cat`) reads it, so when this process dies the
 * socket closes, PID 1 sees end of file and the container stops. The connection must not keep the host process alive (unref).
 * Attach before start, so that no window exists where the container runs without its lifeline.
 */
export async function attachLifeline(container: EngineContainer): Promise<NodeJS.ReadWriteStream> {
  const lifeline = (await container.attach({
    stream: true,
    stdin: true,
    hijack: true,
  })) as NodeJS.ReadWriteStream;
  lifeline.on("error", () => undefined);
  (lifeline as unknown as { unref?: () => void }).unref?.();
  return lifeline;
}
