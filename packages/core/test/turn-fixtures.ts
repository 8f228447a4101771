import { defaultOutputFileLimits } from "../src/output/output-files.ts";

/** A sandbox that counts the containers asked for and refuses to make any. */
export function countingSandbox() {
  const sandbox = {
    created: 0,
    async createSession(): Promise<never> {
      sandbox.created += 1;
      throw new Error("no container in this test");
    },
  };
  return sandbox;
}

/** Code-action settings for turns that never reach a container (two repairs). */
export const turnSettings = {
  execTimeout: 10,
  maxRepairs: 2,
  maxToolCalls: 5,
  samples: 1,
  decimals: 2,
  outputFiles: defaultOutputFileLimits,
};
