// The bridge relay's process for one run: the warm one the session hands out (started by the
// manager's warmCommand before anyone asked), or a fresh exec. The two must be the same relay; when
// they are not, the reason is logged (debug) or, with `warmMismatch: "error"` (a test's), thrown.
import type { SandboxSession, WarmProcess } from "@codeaction/sandbox";
import type { Logger } from "pino";
import type { RelayProcess } from "../bridge/host-bridge.ts";
import { relaySource } from "../bridge/python-sources.ts";
import { CodeActionError } from "../errors/code-action-error.ts";

/**
 * Each relay command line this copy of the package made, and its preimport list: the sandbox hands
 * a warm process's command back as the very array it was given, so a relay is known by identity.
 */
const relayPreimports = new WeakMap<readonly string[], readonly string[]>();

/**
 * The relay's own command line: one exec per run, stdin attached. Its arguments are the modules the
 * program's interpreter imports while it waits (checked names: preimportSchema).
 */
export function relayCommand(preimport: readonly string[] = []): string[] {
  // -S: the relay needs no site-packages (the program's interpreter, which it starts, has them).
  const command = ["python3", "-I", "-S", "-c", relaySource(), ...preimport];
  relayPreimports.set(command, [...preimport]);
  return command;
}

/**
 * Why the warm relay cannot run this turn's program (undefined when it can): a command this package
 * did not make as its relay, or another preimport list than the turn's.
 */
export function warmRelayMismatch(warm: readonly string[], wanted: readonly string[]): string | undefined {
  const warmModules = relayPreimports.get(warm);
  if (!warmModules) {
    return "the warm command is not this package's bridge relay (a warmCommand of its own, or another copy of @codeaction/core)";
  }
  const wantedModules = relayPreimports.get(wanted) ?? [];
  if (
    warmModules.length === wantedModules.length &&
    warmModules.every((name, index) => name === wantedModules[index])
  ) {
    return undefined;
  }
  return `the warm relay preimports [${warmModules.join(", ")}] and the turn asks for [${wantedModules.join(", ")}]: give createCodeActionSandbox the same preimport as codeAction.preimport`;
}

/**
 * The relay's process (the error when it could not start). The session's warm relay when it is the
 * same command (no exec on the critical path); otherwise a fresh exec, the reason logged. It waits
 * for its start frame, so it may start early: while data files stream in, its exec and interpreter
 * start-up are off the run's critical path.
 */
export function spawnRelay(
  session: Pick<SandboxSession, "spawn"> & {
    takeWarm?: () => Pick<WarmProcess, "argv" | "claim" | "close"> | undefined;
  },
  preimport: readonly string[] = [],
  options: { logger?: Logger; warmMismatch?: "error" } = {},
): RelayProcess | Error {
  const argv = relayCommand(preimport);
  const warm = session.takeWarm?.();
  if (warm) {
    const mismatch = warmRelayMismatch(warm.argv, argv);
    if (mismatch === undefined) return warm.claim();
    warm.close();
    if (options.warmMismatch === "error") {
      throw new CodeActionError(`The warm relay went unused: ${mismatch}.`, { code: "warm-mismatch" });
    }
    options.logger?.debug({ reason: mismatch }, "warm relay not used");
  }
  try {
    return session.spawn(argv);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
