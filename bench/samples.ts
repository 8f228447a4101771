import type Dockerode from "dockerode";
import { scriptedAgent, timedTurn } from "./agents.ts";
import { settle } from "./docker-state.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type SamplesResult = { one: number[]; two: number[] };

/**
 * A turn with `codeAction: { samples: 2 }` against the same turn with 1 (no pool, so each sample
 * starts its own container): when the samples run concurrently the ratio is near 1, not 2.
 */
export async function measureSamples(options: {
  docker: Dockerode;
  rounds: number;
  onProgress?: (message: string) => void;
}): Promise<SamplesResult> {
  const one = await scriptedAgent({ program: overheadProgram, replies: options.rounds + 1, sandbox: {} });
  const two = await scriptedAgent({
    program: overheadProgram,
    replies: 2 * (options.rounds + 1),
    sandbox: {},
    extra: { codeAction: { samples: 2 } },
  });
  const result: SamplesResult = { one: [], two: [] };
  try {
    await timedTurn(one, "1");
    await timedTurn(two, "1");
    for (let round = 0; round < options.rounds; round += 1) {
      const order = round % 2 === 0 ? (["one", "two"] as const) : (["two", "one"] as const);
      for (const name of order) {
        await settle(options.docker, { expected: 0 });
        result[name].push((await timedTurn(name === "one" ? one : two, "1")).ms);
      }
      options.onProgress?.(`samples round ${round + 1}/${options.rounds}`);
    }
  } finally {
    await Promise.allSettled([one.shutdown(), two.shutdown()]);
  }
  return result;
}
