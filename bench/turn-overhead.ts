import { ScriptedChatModel } from "@codeaction/core/testing";
import { HumanMessage } from "@langchain/core/messages";
import type Dockerode from "dockerode";
import { extractProgram } from "../packages/core/src/turn/extract-program.ts";
import { fenced, question, scriptedAgent, timedTurn } from "./agents.ts";
import { settle } from "./docker-state.ts";
import { runSeedProgram } from "./seed-runner.ts";

export const overheadProgram = 'print("RESULT: 1")';
export const image = "codeaction/python:3.11";

export type TurnSamples = Record<string, number[]>;

/**
 * Turn overhead with an instant scripted model and `print("RESULT: 1")`, the variants interleaved
 * round by round (their order rotates), each measured from the same quiet state: no removal
 * pending, the warm pool full.
 *   seed:    seed 000's `run_sandboxed` (docker run --rm -i, the program on stdin), after the same model call
 *   cold:    buildAgent code-action with `pool: 0` (the cold path)
 *   default: buildAgent code-action with no sandbox options (warm by default: one container)
 *   pooled:  buildAgent code-action with `pool: 2`
 * The default agent's first turn is untimed like every variant's: the figures are its second turn on.
 */
export async function measureTurnOverhead(options: {
  docker: Dockerode;
  rounds: number;
  backend: "docker" | "gvisor";
  includeSeed: boolean;
  poolSize: number;
  onProgress?: (message: string) => void;
}): Promise<TurnSamples> {
  const replies = options.rounds + 2;
  const cold = await scriptedAgent({
    program: overheadProgram,
    replies,
    sandbox: { backend: options.backend, pool: 0 },
  });
  // Only the backend is named (gVisor has to be asked for): everything else is the default.
  const defaults = await scriptedAgent({
    program: overheadProgram,
    replies,
    sandbox: options.backend === "docker" ? {} : { backend: options.backend },
  });
  const pooled = await scriptedAgent({
    program: overheadProgram,
    replies,
    sandbox: { backend: options.backend, pool: options.poolSize },
  });
  const seedModel = new ScriptedChatModel(Array.from({ length: replies }, () => fenced(overheadProgram)));
  const variants: Array<{ name: string; run: () => Promise<number> }> = [];
  if (options.includeSeed) {
    variants.push({
      name: "seed",
      run: async () => {
        const started = performance.now();
        // The same instant model call the other variants make, then the seed's runner.
        const reply = await seedModel.invoke([new HumanMessage(question.messages[0]!.content)]);
        const run = await runSeedProgram(extractProgram(String(reply.content)), { image });
        const ms = performance.now() - started;
        if (run.exitCode !== 0 || !run.stdout.includes("RESULT: 1")) {
          throw new Error(`the seed runner failed: exit ${run.exitCode}: ${run.stderr.slice(-300)}`);
        }
        return ms;
      },
    });
  }
  variants.push({ name: "cold", run: async () => (await timedTurn(cold, "1")).ms });
  variants.push({ name: "default", run: async () => (await timedTurn(defaults, "1")).ms });
  variants.push({ name: "pooled", run: async () => (await timedTurn(pooled, "1")).ms });
  const samples: TurnSamples = Object.fromEntries(variants.map((variant) => [variant.name, []]));
  try {
    // One untimed turn each: first-call costs (module loading, image cache) are not the subject.
    for (const variant of variants) {
      await settle(options.docker, { expected: options.poolSize + 1 });
      await variant.run();
    }
    for (let round = 0; round < options.rounds; round += 1) {
      const order = variants.map((_, index) => variants[(index + round) % variants.length]!);
      for (const variant of order) {
        await settle(options.docker, { expected: options.poolSize + 1 });
        samples[variant.name]!.push(await variant.run());
      }
      options.onProgress?.(`turn overhead (${options.backend}) round ${round + 1}/${options.rounds}`);
    }
  } finally {
    await Promise.allSettled([cold.close(), defaults.close(), pooled.close()]);
  }
  return samples;
}
