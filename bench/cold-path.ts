import { finished } from "node:stream/promises";
import { SandboxManager } from "@codeaction/sandbox";
import type Dockerode from "dockerode";
import { settle } from "./docker-state.ts";

/** A stand-in for the relay: an interpreter that waits for its input, then prints the result. */
const stepProgram = 'import sys; sys.stdin.read(); print("RESULT: 1")';

export type ColdPathSamples = Record<string, number[]>;

type LoggerOption = NonNullable<NonNullable<ConstructorParameters<typeof SandboxManager>[1]>["logger"]>;

/** A logger that keeps the launch steps the sandbox logs at debug level ("sandbox container started"). */
function stepRecorder(): { logger: LoggerOption; take: () => Record<string, number> } {
  let steps: Record<string, number> = {};
  const logger = {
    level: "debug",
    child: () => logger,
    isLevelEnabled: () => true,
    debug: (object: unknown, message?: string) => {
      if (message === "sandbox container started") {
        steps = { ...(object as { stepsMs?: Record<string, number> }).stepsMs };
      }
    },
    trace: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
    fatal: () => undefined,
  };
  return {
    logger: logger as unknown as LoggerOption,
    take: () => {
      const taken = steps;
      steps = {};
      return taken;
    },
  };
}

/**
 * Where a cold run's time goes, in the order a session takes the steps: the launch's steps as the
 * sandbox logs them (create; read-back before start with the lifeline's attach; start; read-back
 * after start with the program's exec, started with the container as code-action's relay is, and
 * then the kill helper's), then the wait for the kill helper (the program's stdin is held until it
 * is ready), the interpreter and program, the exit code, and the removal, which a turn does not
 * wait for. No pool: every round is a cold start.
 */
export async function measureColdPath(options: {
  docker: Dockerode;
  rounds: number;
  backend: "docker" | "gvisor";
  onProgress?: (message: string) => void;
}): Promise<ColdPathSamples> {
  const recorder = stepRecorder();
  const manager = new SandboxManager({ backend: options.backend, pool: 0 }, { logger: recorder.logger });
  await manager.ready();
  const samples: ColdPathSamples = {};
  try {
    for (let round = 0; round <= options.rounds; round += 1) {
      await settle(options.docker, { expected: 0 });
      const steps = await runOnce(manager, recorder.take);
      // The first round warms caches and is not counted.
      if (round > 0) {
        for (const [step, milliseconds] of Object.entries(steps)) {
          samples[step] ??= [];
          samples[step].push(milliseconds);
        }
      }
      options.onProgress?.(`cold path (${options.backend}) round ${round}/${options.rounds}`);
    }
  } finally {
    await manager.close();
  }
  return samples;
}

async function runOnce(manager: SandboxManager, takeSteps: () => Record<string, number>) {
  const began = performance.now();
  // The program is the command the container starts with, as code-action's relay is.
  const argv = ["python3", "-I", "-c", stepProgram];
  const session = await manager.createSession({ command: argv });
  const created = performance.now();
  const launchSteps = takeSteps();
  const process = session.spawn(argv);
  const stdout: Buffer[] = [];
  process.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  process.stderr.resume();
  process.stdin.end("go\n");
  await process.started;
  const started = performance.now();
  await Promise.all([finished(process.stdout), finished(process.stderr)]);
  const ended = performance.now();
  const { exitCode } = await process.exit;
  const exited = performance.now();
  if (exitCode !== 0 || !Buffer.concat(stdout).toString().includes("RESULT: 1")) {
    throw new Error(`the cold-path program failed: exit ${exitCode}`);
  }
  await session.close();
  const removed = performance.now();
  const launchTotal = Object.values(launchSteps).reduce((total, value) => total + value, 0);
  return {
    ...launchSteps,
    "createSession besides the launch": created - began - launchTotal,
    "kill helper ready (program's stdin held)": started - created,
    "interpreter and program": ended - started,
    "exit code read": exited - ended,
    "critical path in all": exited - began,
    "removal (off the critical path)": removed - exited,
  };
}
