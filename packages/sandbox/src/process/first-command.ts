import { randomUUID } from "node:crypto";
import { execMarkerName } from "../config.ts";
import type { EngineContainer, EngineExec } from "../engine/container-engine.ts";
import { destroyStream } from "../engine/engine-operations.ts";
import { SandboxError } from "../errors/sandbox-error.ts";
import { startExec } from "./exec.ts";

type Socket = NodeJS.ReadWriteStream & { ref?: () => void; unref?: () => void };

/**
 * The command a cold session's container starts with (`createSession({ command })`). Its exec goes
 * out right after the container's start and before the kill helper's: the engine runs one exec of a
 * container at a time, so the command's own start-up (an exec, an interpreter) overlaps the helper's
 * instead of following it. The session hands it out as a WarmHandle (`session.takeWarm()`): its
 * claim connects it, and nothing reaches its stdin before the helper is ready. Unused, it ends with
 * the container.
 */
export type FirstCommand = {
  readonly argv: readonly string[];
  /** Its kill marker (CODEACTION_EXEC_ID), as any spawned process has. */
  readonly id: string;
  readonly started: { exec: EngineExec; stream: NodeJS.ReadWriteStream };
};

/** Longest command accepted, in bytes (Linux takes about 2 MiB of arguments; the bridge relay is ~40 KB). */
const maxCommandBytes = 1024 * 1024;

/** `createSession`'s `command`, checked: a non-empty list of strings, at most 1 MiB in all. */
export function checkedCommand(command: unknown): string[] | undefined {
  if (command === undefined) return undefined;
  const valid =
    Array.isArray(command) &&
    command.length > 0 &&
    command.every((part) => typeof part === "string" && !part.includes("\0"));
  if (!valid) {
    throw new SandboxError(
      'createSession\'s `command` must be a non-empty array of strings without NUL bytes (an argv such as ["python3", "-c", "..."]); leave it out to start none.',
      { code: "invalid-option" },
    );
  }
  const bytes = command.reduce((total: number, part: string) => total + Buffer.byteLength(part) + 1, 0);
  if (bytes > maxCommandBytes) {
    throw new SandboxError(
      `createSession's \`command\` is ${bytes} bytes long, over the ${maxCommandBytes} bytes allowed; put a long program in a file and run that.`,
      { code: "invalid-option" },
    );
  }
  return [...command];
}

/**
 * Starts `argv` as one exec with stdin attached (the marker and working folder of
 * SandboxSession.spawn). Its connection does not keep the host process alive until it is taken.
 */
export async function startFirstCommand(
  container: EngineContainer,
  argv: readonly string[],
  options: { cwd: string; guard: boolean },
): Promise<FirstCommand> {
  const id = randomUUID();
  const started = await startExec(container, {
    argv: [...argv],
    env: { [execMarkerName]: id },
    cwd: options.cwd,
    stdin: true,
    guard: options.guard,
  });
  (started.stream as Socket).unref?.();
  return { argv, id, started };
}

/** Hands the first command's connection out: from now on it keeps the host process alive like any exec. */
export function takeFirstCommand(first: FirstCommand): FirstCommand["started"] {
  (first.started.stream as Socket).ref?.();
  return first.started;
}

/** Ends an unused first command: its stdin closes (a waiting command sees end of file) with its connection. */
export function dropFirstCommand(first: FirstCommand | undefined): void {
  if (first) destroyStream(first.started.stream);
}
