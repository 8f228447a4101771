import type Dockerode from "dockerode";
import { question, scriptedAgent } from "./agents.ts";
import { settle } from "./docker-state.ts";
import { overheadProgram } from "./turn-overhead.ts";

export type SamplesResult = { one: number[]; two: number[]; overlap: number[]; slowest: number[] };

/**
 * A turn with `codeAction: { samples: 2 }` against the same turn with 1, both with `pool: 2` (so
 * container start-up, which the two cores here cannot do twice at once for free, is not the
 * subject): when the samples run concurrently the ratio is near 1, not 2. `overlap` is the sum of
 * the two samples' own durations over the turn's: 2 when they run fully at once, 1 when one after
 * the other.
 */
export async function measureSamples(options: {
  docker: Dockerode;
  rounds: number;
  onProgress?: (message: string) => void;
}): Promise<SamplesResult> {
  const sandbox = { pool: 2 };
  const one = await scriptedAgent({ program: overheadProgram, replies: options.rounds + 1, sandbox });
  const two = await scriptedAgent({
    program: overheadProgram,
    replies: 2 * (options.rounds + 1),
    sandbox,
    extra: { codeAction: { samples: 2 } },
  });
  const result: SamplesResult = { one: [], two: [], overlap: [], slowest: [] };
  const turn = async (name: "one" | "two") => {
    const started = performance.now();
    const outcome = await (name === "one" ? one : two).invoke(question);
    const ms = performance.now() - started;
    if (outcome.status !== "answered" || outcome.answer !== "1")
      throw new Error(`a samples turn failed: ${outcome.status}`);
    return { ms, attempts: outcome.attempts };
  };
  try {
    await settle(options.docker, { expected: 4 });
    await turn("one");
    await turn("two");
    for (let round = 0; round < options.rounds; round += 1) {
      const order = round % 2 === 0 ? (["one", "two"] as const) : (["two", "one"] as const);
      for (const name of order) {
        await settle(options.docker, { expected: 4 });
        const { ms, attempts } = await turn(name);
        result[name].push(ms);
        if (name === "two") {
          const own = attempts.reduce((total, attempt) => total + (attempt.timings?.totalMs ?? 0), 0);
          result.overlap.push(own / ms);
          // The acceptance of the agreement check: a turn takes about as long as its slowest sample.
          const slowest = Math.max(...attempts.map((attempt) => attempt.timings?.totalMs ?? 0));
          result.slowest.push(ms / slowest);
        }
      }
      options.onProgress?.(`samples round ${round + 1}/${options.rounds}`);
    }
  } finally {
    await Promise.allSettled([one.close(), two.close()]);
  }
  return result;
}
